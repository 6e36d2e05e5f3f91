"""``ScienceWorldJVM``: one ScienceWorld simulator in a JVM of its own, with a capped heap.

scienceworld's ``ScienceWorldEnv`` starts its JVM through py4j's
``launch_gateway`` without JVM options, so the heap defaults to a quarter of
the machine's memory (measured here: 2 GB resident after five tasks). This
class starts the same jar with py4j's gateway server the same way, with options:

- ``-Xmx``: the heap cap. Playing every task with the valid-action list on
  needs 128 MB; generating the longest gold paths needs 192 MB.
- ``-Xms64m`` and heap free ratios of 20-40 %: the JVM's initial heap would
  otherwise be the whole cap (1/64 of this machine's memory is more than
  256 MB), and its resident size sits near 340 MB after a few dozen episodes;
  with these, near 160 MB, for about 2 % more CPU.
- ``-XX:+UseSerialGC``: one GC thread instead of one per core; a session's
  JVM is single-threaded work.
- ``-XX:hashCode=2``: a constant identity hash. ScienceWorld keeps a room's
  objects in hash sets keyed by identity, so with the JVM's default the order
  in which ``look around`` lists them, the numbering of ambiguous choices and
  even the gold path change from one load to the next. With a constant hash
  they follow insertion order, which is the same in every JVM.

The JVM's stdout and stderr never reach this process's output: both are
drained by threads, stdout to nowhere and stderr into a short buffer that
error messages quote.
"""

from __future__ import annotations

import collections
import contextlib
import os
import subprocess
import threading
import weakref
from collections.abc import Sequence
from typing import IO, Any

DEFAULT_HEAP_MB = 256
FOOTPRINT_OPTIONS = ("-Xms64m", "-XX:MinHeapFreeRatio=20", "-XX:MaxHeapFreeRatio=40", "-XX:+UseSerialGC")
DETERMINISM_OPTIONS = ("-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2")
_STOP_TIMEOUT_S = 5.0


class JVMError(RuntimeError):
    """ScienceWorld's JVM could not start, or failed while answering."""


def java_executable() -> str:
    """``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set, else ``java`` from ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    return os.path.join(home, "bin", "java") if home else "java"


def jvm_options(heap_mb: int, extra: Sequence[str] = ()) -> list[str]:
    if isinstance(heap_mb, bool) or not isinstance(heap_mb, int) or heap_mb < 64:
        raise ValueError(f"heap_mb must be an integer of at least 64 (MB), got {heap_mb!r}")
    return [f"-Xmx{heap_mb}m", *FOOTPRINT_OPTIONS, *DETERMINISM_OPTIONS, *extra]


def _drain(stream: IO[bytes], keep: collections.deque[str]) -> None:
    """Read a JVM pipe to its end so the JVM never blocks on a full pipe; keep the last lines."""
    with stream:
        for line in iter(stream.readline, b""):
            keep.append(line.decode("utf-8", "replace").rstrip())


def _launch(
    java: str, options: Sequence[str], stderr_tail: collections.deque[str]
) -> tuple[int, subprocess.Popen[bytes]]:
    """Start py4j's GatewayServer with ScienceWorld's jar on the class path; return its port and process.

    What py4j's ``launch_gateway`` does, plus JVM options, and without the
    leaked ``/dev/null`` handle and unreaped process when the JVM fails to start.
    """
    from py4j.java_gateway import find_jar_path
    from scienceworld.constants import BASEPATH, JAR_PATH

    command = [
        java,
        "-classpath",
        os.pathsep.join((find_jar_path(), JAR_PATH)),
        *options,
        "py4j.GatewayServer",
        "--die-on-broken-pipe",  # the JVM exits when this process closes its stdin or dies
        "0",
    ]
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=BASEPATH
        )
    except OSError as exc:
        raise JVMError(
            f"cannot run {java!r} ({exc.strerror}): ScienceWorld needs Java 17 or newer; install it "
            "(e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
        ) from None
    assert process.stdout is not None and process.stderr is not None
    errors = threading.Thread(target=_drain, args=(process.stderr, stderr_tail), daemon=True, name="sciworld-jvm-err")
    errors.start()
    first_line = process.stdout.readline()
    try:
        port = int(first_line)
    except ValueError:
        process.kill()
        process.wait()
        errors.join(timeout=_STOP_TIMEOUT_S)
        process.stdout.close()
        if process.stdin is not None:
            process.stdin.close()
        said = " | ".join(line for line in stderr_tail if line) or first_line.decode("utf-8", "replace").strip()
        raise JVMError(
            f"ScienceWorld's JVM did not start with options {list(options)}: {said or 'no output'}"
        ) from None
    threading.Thread(
        target=_drain, args=(process.stdout, collections.deque(maxlen=0)), daemon=True, name="sciworld-jvm-out"
    ).start()
    return port, process


def _stop(gateway: Any, process: subprocess.Popen[bytes]) -> None:
    """Close the gateway, let the JVM exit on its own (``--die-on-broken-pipe``), else kill it."""
    with contextlib.suppress(Exception):
        gateway.shutdown()
    if process.stdin is not None:
        with contextlib.suppress(OSError, ValueError):  # a dead JVM's pipe may be broken
            process.stdin.close()
    try:
        process.wait(timeout=_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=_STOP_TIMEOUT_S)


class ScienceWorldJVM:
    """A running ScienceWorld simulator: ``server`` is its ``PythonInterface`` over py4j.

    ``close()`` stops the JVM and waits for it to exit; it is idempotent, and
    runs by itself when the object is garbage-collected or the interpreter
    exits. If this process dies, the JVM exits when its stdin pipe breaks.
    """

    def __init__(self, *, heap_mb: int = DEFAULT_HEAP_MB, java: str | None = None, options: Sequence[str] = ()) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway

        self.heap_mb = heap_mb
        self.java = java or java_executable()
        self.options = jvm_options(heap_mb, options)
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        port, process = _launch(self.java, self.options, self._stderr)
        self.process: subprocess.Popen[bytes] = process
        self.gateway = JavaGateway(
            gateway_parameters=GatewayParameters(port=port, auto_field=True, auto_close=True),
            java_process=process,
        )
        self._finalizer = weakref.finalize(self, _stop, self.gateway, process)
        try:
            self.server: Any = self.gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()
        except Exception:
            self.close()
            raise

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr_tail(self) -> str:
        return " | ".join(line.strip() for line in self._stderr if line.strip())

    def describe_failure(self, exc: BaseException) -> str:
        """Why a call failed, in words that say what to do."""
        text = str(exc).strip().splitlines()
        first = next((line for line in text if "Exception" in line or "Error" in line), text[0] if text else "")
        if "OutOfMemoryError" in str(exc):
            return (
                f"ScienceWorld's JVM ran out of its {self.heap_mb} MB heap ({first}); "
                "start the server with a larger env_kwargs.heap_mb"
            )
        if not self.alive:
            return (
                f"ScienceWorld's JVM (pid {self.pid}) exited with code {self.process.returncode}"
                f"{': ' + self.stderr_tail() if self.stderr_tail() else ''}; this instance is unusable, "
                "create a new session"
            )
        return f"ScienceWorld's JVM failed: {type(exc).__name__}: {first}"

    def close(self) -> None:
        self._finalizer()
