"""``agenthub serve workers=N``: N server processes behind one port, each session always at its own worker.

* **One port, N processes.** Every worker listens on the public port (``SO_REUSEPORT``: the kernel spreads
  connections over them) and on a port of its own (``port+1`` .. ``port+N``; free ones with ``port=0``).
* **Sessions stay with their worker.** A worker's session ids start with its mark (``w1g0-...``: worker 1,
  first start), and its 201 answer to a create names the session at the worker's own port in ``Location``,
  as a Kubernetes replica does with ``advertise_url``; :class:`~agenthub.service.client.EnvClient` sends that
  session's calls there, so steps pass through no proxy. A call that reaches another worker anyway is
  passed on to the right one (:mod:`.router`).
* **A crash stays local.** The supervisor (:mod:`.supervisor`) restarts a worker that exits, on the same
  sockets; the sessions it held are lost and answered ``404 session_not_found`` saying so. ``/healthz`` on
  the public port asks every worker. SIGTERM stops them all.
"""

from agenthub.service.workers.supervisor import serve_workers

__all__ = ["serve_workers"]
