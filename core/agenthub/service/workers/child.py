"""A worker process of ``agenthub serve workers=N``: ``python -m agenthub.service.workers.child``,
its :class:`~agenthub.service.workers.plan.WorkerPlan` on stdin and its two sockets inherited."""

from __future__ import annotations

import functools
import socket
import sys
from pathlib import Path

from agenthub.plugins import get_plugin_host
from agenthub.processes import watch_parent_from_env
from agenthub.service import sessions
from agenthub.service.serve import serve
from agenthub.service.settings import ServiceSettings, apply_env_defaults
from agenthub.service.workers.plan import WorkerPlan, session_mark
from agenthub.service.workers.router import WorkerRouter


def main() -> int:
    watch_parent_from_env()  # a worker never outlives its supervisor
    plan = WorkerPlan.model_validate_json(sys.stdin.buffer.read())
    sessions.SESSION_ID_PREFIX = session_mark(plan.index, plan.generation)
    spec = get_plugin_host().env(plan.env)
    settings = ServiceSettings.model_validate(plan.settings)
    # The worker's own port first: its address is the one it reports as ready.
    sockets = [socket.socket(fileno=plan.own_fd), socket.socket(fileno=plan.public_fd)]
    router = functools.partial(
        WorkerRouter,
        index=plan.index,
        generation=plan.generation,
        urls=plan.urls,
        public_port=plan.public_port,
        max_body_bytes=apply_env_defaults(settings, spec.service_defaults, env_name=spec.name).max_body_bytes,
    )
    serve(spec, settings, ready_file=Path(plan.ready_file), sockets=sockets, wrap_app=router)
    return 0


if __name__ == "__main__":
    sys.exit(main())
