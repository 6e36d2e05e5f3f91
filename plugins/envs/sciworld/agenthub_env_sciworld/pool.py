"""``JVMPool``: several ScienceWorld sessions packed into each JVM.

One JVM idles near 100 MB resident, most of it the JVM itself, not the
world: ScienceWorld's ``PythonInterface`` is an ordinary object, and one
py4j gateway can build as many as it likes. A pool hands each session a
``JVMSlot`` (its own ``PythonInterface``) in a JVM with room, starting a
JVM when none has any:

- **Cap.** At most ``sessions_per_jvm`` slots per JVM. ``1`` is the old
  one-JVM-per-session mode.
- **Recycling.** A JVM that has served ``recycle_after`` resets takes no
  new slots; each of its sessions moves to a fresh JVM at its next reset,
  and the JVM stops when its last slot leaves. Heap fragments and
  ScienceWorld's caches can then never grow without bound.
- **Crashes.** A JVM that dies fails the calls of its own sessions
  (``JVMError``: an env failure for the service, which stays up); their
  next reset, and every new session, goes to another JVM.
- **Threads.** The service calls different sessions from different
  threads. Each JVM has a lock, so the calls into one JVM run one at a
  time, which the shared state below needs anyway; different JVMs run at once.

ScienceWorld keeps two things per JVM, not per world, and a slot carries
its own copy of both, put back when the JVM turns from one slot to another
(three extra py4j calls at a switch, none while one session keeps the JVM):

- ``util.UniqueIdentifier``'s counter, which numbers every object and which
  ``load`` resets to 0. Objects compare equal by that number, and with the
  constant identity hash (``-XX:hashCode=2``) every hash set compares them,
  so a world must keep numbering its new objects (steam, mixtures) from
  where it stood, or an object would clash with one of its own.
- ``SimplifierProcessor``'s enabled simplifications, which ``load`` sets
  and every tick reads.

With both restored a packed session plays exactly as it does in a JVM of
its own; the tests compare transcripts.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from py4j.protocol import Py4JError

from .jvm import DEFAULT_HEAP_MB, JVMError, ScienceWorldJVM, jvm_options

T = TypeVar("T")

DEFAULT_SESSIONS_PER_JVM = 8
DEFAULT_RECYCLE_AFTER = 200
"""Resets a JVM serves before it is replaced (measured in ``benchmarks/sciworld_packing.py``)."""


def check_positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


class SharedJVM:
    """One JVM and the slots it hosts; all its calls go through ``lock``."""

    def __init__(self, jvm: ScienceWorldJVM) -> None:
        self.jvm = jvm
        self.lock = threading.Lock()
        self.slots = 0
        self.resets = 0
        self.retired = False
        self.owner: JVMSlot | None = None
        """The slot whose counter and simplifications the JVM holds now."""
        statics = jvm.gateway.jvm
        self._uuids: Any = statics.util.UniqueIdentifier
        self._simplifier: Any = statics.main.scala.scienceworld.runtime.SimplifierProcessor

    @property
    def usable(self) -> bool:
        return not self.retired and self.jvm.alive

    def switch_to(self, slot: JVMSlot) -> None:
        """Save the previous owner's JVM-wide state and put ``slot``'s back; call with ``lock`` held."""
        if self.owner is slot:
            return
        if self.owner is not None:
            self.owner.uuid_count = int(self._uuids.count())
        getattr(self._uuids, "count_$eq")(slot.uuid_count)
        self._simplifier.parseSimplificationStr(slot.simplifications)
        self.owner = slot


class JVMSlot:
    """One session's ``PythonInterface`` in a shared JVM.

    ``call(name, *args)`` calls a ``PythonInterface`` method under the JVM's
    lock, with this slot's counter and simplifications in place.
    """

    def __init__(self, shared: SharedJVM, server: Any) -> None:
        self.shared = shared
        self.server = server
        self.uuid_count = 0
        self.simplifications = ""
        self.released = False

    @property
    def jvm(self) -> ScienceWorldJVM:
        return self.shared.jvm

    def call(self, name: str, *args: Any) -> Any:
        return self.run(lambda: getattr(self.server, name)(*args))

    def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` (py4j calls for this slot) under the JVM's lock; a py4j failure becomes ``JVMError``."""
        shared = self.shared
        with shared.lock:
            if not shared.jvm.alive:
                # Not even a py4j call: py4j leaks the socket of a connection the dead JVM refuses.
                shared.retired = True
                raise JVMError(shared.jvm.describe_failure(RuntimeError("the JVM is not running")))
            try:
                shared.switch_to(self)
                return work()
            except Py4JError as exc:
                if not shared.jvm.alive:
                    shared.retired = True
                raise JVMError(shared.jvm.describe_failure(exc)) from None

    def load(self, task_name: str, variation: int, simplifications: str) -> None:
        """``load`` a task (a reset), counting it towards the JVM's recycling."""

        def load() -> None:
            self.shared.owner = self  # load resets the counter and sets the simplifications itself
            self.server.load(task_name, variation, simplifications, False)
            self.simplifications = simplifications

        self.run(load)
        self.shared.resets += 1


class _Start:
    """A JVM being started, and the slots reserved in it by the sessions that wait for it."""

    def __init__(self) -> None:
        self.reserved = 0
        self._ready = threading.Event()
        self._shared: SharedJVM | None = None
        self._error: BaseException | None = None

    def done(self, shared: SharedJVM) -> None:
        self._shared = shared
        self._ready.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._ready.set()

    def wait(self) -> SharedJVM:
        self._ready.wait()
        if self._shared is None:
            raise JVMError(f"the JVM this session waited for did not start: {self._error}")
        return self._shared


class JVMPool:
    """Hands out ``JVMSlot``s, at most ``sessions_per_jvm`` per JVM; thread-safe."""

    def __init__(
        self,
        *,
        sessions_per_jvm: int = DEFAULT_SESSIONS_PER_JVM,
        recycle_after: int = DEFAULT_RECYCLE_AFTER,
        heap_mb: int = DEFAULT_HEAP_MB,
        java: str | None = None,
        options: Sequence[str] = (),
    ) -> None:
        self.sessions_per_jvm = check_positive("sessions_per_jvm", sessions_per_jvm)
        self.recycle_after = check_positive("recycle_after", recycle_after)
        jvm_options(heap_mb, options)  # refuse a bad heap before any JVM starts
        self.heap_mb = heap_mb
        self.java = java
        self.options = tuple(options)
        self._lock = threading.Lock()
        self._jvms: list[SharedJVM] = []
        self._starting: list[_Start] = []

    def jvms(self) -> list[SharedJVM]:
        """The JVMs running now (a copy)."""
        with self._lock:
            return list(self._jvms)

    def acquire(self) -> JVMSlot:
        """A slot in a JVM with room; starts a JVM when none has any (or joins one being started)."""
        joined: _Start | None = None
        with self._lock:
            shared = next(
                (s for s in self._jvms if s.usable and s.slots < self.sessions_per_jvm and not self._spent(s)), None
            )
            if shared is not None:
                shared.slots += 1
            else:
                joined = next((p for p in self._starting if p.reserved < self.sessions_per_jvm), None)
                if joined is None:
                    started = _Start()
                    self._starting.append(started)
                else:
                    started = joined
                started.reserved += 1
        if shared is None:
            # A JVM starts (seconds) outside the pool's lock, so other sessions come and go meanwhile; a burst of
            # new sessions joins the JVM being started instead of starting one each.
            if joined is None:
                shared = self._start(started)
                return JVMSlot(shared, shared.jvm.server)
            shared = joined.wait()
        try:
            with shared.lock:
                server = shared.jvm.gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()
        except Py4JError as exc:
            self._leave(shared)
            raise JVMError(shared.jvm.describe_failure(exc)) from None
        return JVMSlot(shared, server)

    def _start(self, start: _Start) -> SharedJVM:
        try:
            jvm = ScienceWorldJVM(heap_mb=self.heap_mb, java=self.java, options=self.options)
        except BaseException as exc:
            with self._lock:
                self._starting.remove(start)
            start.fail(exc)
            raise
        shared = SharedJVM(jvm)
        with self._lock:
            self._starting.remove(start)
            shared.slots = start.reserved
            self._jvms.append(shared)
        start.done(shared)
        return shared

    def release(self, slot: JVMSlot) -> None:
        """Give a slot back; its JVM stops when it was the last one there. Harmless twice."""
        if slot.released:
            return
        slot.released = True
        shared = slot.shared
        with shared.lock:
            if shared.owner is slot:
                shared.owner = None
            if shared.jvm.alive and slot.server is not shared.jvm.server:
                with contextlib.suppress(Py4JError):  # let the JVM drop its only reference to the world
                    shared.jvm.gateway.detach(slot.server)
        self._leave(shared)

    def needs_move(self, slot: JVMSlot) -> bool:
        """Whether a session should move to another JVM before its next reset (retired, dead or spent)."""
        shared = slot.shared
        if not shared.jvm.alive:
            shared.retired = True
        if self._spent(shared):
            shared.retired = True
        return shared.retired

    def close(self) -> None:
        """Stop every JVM (their slots fail from then on)."""
        with self._lock:
            jvms, self._jvms = self._jvms, []
        for shared in jvms:
            shared.jvm.close()

    def _spent(self, shared: SharedJVM) -> bool:
        return shared.resets >= self.recycle_after

    def _leave(self, shared: SharedJVM) -> None:
        with self._lock:
            shared.slots -= 1
            stop = shared.slots == 0
            if stop:
                self._jvms.remove(shared)
        if stop:
            shared.jvm.close()


_POOLS: dict[tuple[object, ...], JVMPool] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(
    *,
    sessions_per_jvm: int,
    recycle_after: int,
    heap_mb: int,
    java: str | None,
    options: Sequence[str],
) -> JVMPool:
    """The process's pool for these settings: every env built with them shares its JVMs."""
    key = (sessions_per_jvm, recycle_after, heap_mb, java, tuple(options))
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = JVMPool(
                sessions_per_jvm=sessions_per_jvm,
                recycle_after=recycle_after,
                heap_mb=heap_mb,
                java=java,
                options=options,
            )
        return pool
