"""Small real environments with one property each, for service tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from agenthub.protocols import StepTuple
from agenthub.types import Action, TaskId


class SlowEnv:
    """Each step sleeps ``delay`` seconds (blocking, like a JVM call) and records overlapping calls."""

    name = "slow"
    default_max_turns = 5
    active = 0
    max_active = 0
    _lock = threading.Lock()

    def __init__(self, delay: float = 0.3) -> None:
        self.delay = delay
        self.turns = 0

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self.turns = 0
        return "ready", {}

    def step(self, action: Action) -> StepTuple:
        cls = type(self)
        with cls._lock:
            cls.active += 1
            cls.max_active = max(cls.max_active, cls.active)
        time.sleep(self.delay)
        with cls._lock:
            cls.active -= 1
        self.turns += 1
        return f"step {self.turns}: {action}", 0.0, False, False, {}

    def close(self) -> None:
        return None


class VerySlowEnv(SlowEnv):
    """A step that blocks for 2 s, far longer than any healthy request takes."""

    name = "veryslow"

    def __init__(self, delay: float = 2.0) -> None:
        super().__init__(delay)


class SlowResetEnv(SlowEnv):
    """A reset (the create of a session) that blocks for 0.5 s: time to cancel a create in flight."""

    name = "slowreset"

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        time.sleep(0.5)
        return super().reset(task_id=task_id, seed=seed, options=options)


class FailingEnv:
    """Raises on the action 'explode', like an environment bug."""

    name = "failing"

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return "ok", {}

    def step(self, action: Action) -> StepTuple:
        if action == "explode":
            raise RuntimeError("the simulator crashed")
        return "fine", 0.0, False, False, {}

    def close(self) -> None:
        return None


class DriftingEnv:
    """Its reset is impure (observations drift between resets): the checker must catch it."""

    name = "drifting"
    resets = 0

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self.resets = getattr(self, "resets", 0) + 1
        return f"reset number {self.resets}", {"available_actions": ["wait"]}

    def step(self, action: Action) -> StepTuple:
        return "waited", 0.0, False, False, {}

    def close(self) -> None:
        return None


class ThreadReportingEnv:
    """Declares its calls cheap (``inline_calls``); reports the thread of each call; ``sleep MS`` blocks MS ms."""

    name = "threads"
    inline_calls = True

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return "ready", {"thread": threading.current_thread().name}

    def step(self, action: Action) -> StepTuple:
        if isinstance(action, str) and action.startswith("sleep "):
            time.sleep(int(action.split()[1]) / 1000)
        return "done", 0.0, False, False, {"thread": threading.current_thread().name}

    def close(self) -> None:
        return None


class SurrogateEnv:
    """Its observations carry a lone surrogate, as text decoded from raw bytes with 'surrogateescape' would."""

    name = "surrogate"

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return "ready \udc80", {"raw": "\udcff"}

    def step(self, action: Action) -> StepTuple:
        return "read \udc80 bytes", 0.0, False, False, {}

    def close(self) -> None:
        return None


class NotJsonEnv:
    """Its step's info holds a set, which is not JSON: an env bug found only once the step was applied."""

    name = "notjson"
    steps = 0

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return "ready", {}

    def step(self, action: Action) -> StepTuple:
        type(self).steps += 1
        return "done", 0.0, False, False, {"seen": {1, 2}}

    def close(self) -> None:
        return None
