"""hub -> gymnasium: a ``gymnasium.Env`` over an environment server, with text spaces.

The other direction, a gymnasium env served as a hub env, is :mod:`agenthub.gymnasium.importer`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import gymnasium as gym
from gymnasium import spaces

from agenthub.types import Action, EnvInfo, ResetResult, StepResult, TaskId

# Every character a text observation may contain: tab, newline, carriage return
# and all printable code points of the Basic Multilingual Plane (no surrogates).
TEXT_CHARSET = "\t\n\r" + "".join(
    ch for ch in map(chr, range(0x20, 0xFFFE)) if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF
)
MAX_OBSERVATION_CHARS = 1 << 20
MAX_ACTION_CHARS = 2048


class _Session(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def observation(self) -> str: ...

    @property
    def info(self) -> Mapping[str, Any]: ...


class GymSessionClient(Protocol):
    """What :class:`RemoteGymEnv` needs of a client: ``agenthub.SyncEnvClient`` is one.

    A protocol rather than the client class, so that this module does not import the client
    module, which imports this one for ``as_gym()``.
    """

    def info(self) -> EnvInfo: ...

    def create_session(
        self,
        task_id: TaskId | None = ...,
        *,
        split: str | None = ...,
        seed: int | None = ...,
        options: dict[str, Any] | None = ...,
    ) -> _Session: ...

    def reset(
        self,
        session_id: str,
        task_id: TaskId | None = ...,
        *,
        seed: int | None = ...,
        options: dict[str, Any] | None = ...,
    ) -> ResetResult: ...

    def step(self, session_id: str, action: Action) -> StepResult: ...

    def close_session(self, session_id: str) -> None: ...

    def close(self) -> None: ...


class RemoteGymEnv(gym.Env[str, str]):
    """One server-side session seen through gymnasium's API.

    ``reset(seed=..., options={"task_id": ..., "split": ...})`` starts an episode
    (the first reset creates the session, later ones reuse it); ``step`` sends
    the text action. ``close`` deletes the session and, if this object owns it,
    the client.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 - gymnasium's declared class attribute

    def __init__(
        self,
        client: GymSessionClient,
        *,
        task_id: TaskId | None = None,
        split: str | None = None,
        owns_client: bool = False,
        on_close: Any = None,
    ) -> None:
        self.client = client
        self.task_id = task_id
        self.split = split
        self.owns_client = owns_client
        self._on_close = on_close
        self._session_id: str | None = None
        self.env_info = client.info()
        self.observation_space = spaces.Text(max_length=MAX_OBSERVATION_CHARS, min_length=0, charset=TEXT_CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ACTION_CHARS, min_length=1, charset=TEXT_CHARSET)
        self._closed = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        task_id = options.pop("task_id", self.task_id)
        split = options.pop("split", self.split)
        if self._session_id is None:
            session = self.client.create_session(task_id, split=split, seed=seed, options=options)
            self._session_id = session.id
            return session.observation, dict(session.info)
        if task_id is None:
            # Same rule as a new session: the seed picks the task, so reset(seed=s) is reproducible.
            self.client.close_session(self._session_id)
            self._session_id = None
            return self.reset(seed=seed, options={**options, "split": split})
        result = self.client.reset(self._session_id, task_id, seed=seed, options=options)
        return result.observation, dict(result.info)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._session_id is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        result = self.client.step(self._session_id, action)
        return result.observation, result.reward, result.terminated, result.truncated, dict(result.info)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._session_id is not None:
                self.client.close_session(self._session_id)
                self._session_id = None
        finally:
            if self.owns_client:
                self.client.close()
            if self._on_close is not None:
                self._on_close()
