"""Children that take Ctrl-C as they would from a terminal, whatever signal dispositions this process inherited."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """A ``subprocess.Popen(preexec_fn=...)``: SIGINT back to its default in the child, before it execs.

    A shell without job control starts a background command (``cmd &``) with SIGINT ignored, and every child
    inherits that; Python then installs no KeyboardInterrupt handler, so a test that sends SIGINT to a child
    waits in vain, and a SIGTERM handled "as Ctrl-C" finds Ctrl-C ignored. With this the child starts as it
    would from a terminal.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
