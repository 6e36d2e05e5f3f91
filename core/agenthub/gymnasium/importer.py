"""``env=gym:ID``: any registered gymnasium environment served as an agenthub env.

The observation must be text: a ``Text`` observation space is used as is; otherwise the
env's ``ansi`` render mode is used (gymnasium's toy-text envs have one), or a renderer
the user names (``env_kwargs.render=package.module:function``, called as
``function(env, observation) -> str``). Actions are text: a ``Text`` action space takes
the reply as is; a ``Discrete`` one takes an action's name or its number.

The task id is the seed of ``env.reset``, so a task is one fixed game. An episode is won
when it terminates with ``info["is_success"]`` true or, where the env does not say, with a
positive last reward (FrozenLake's goal, Taxi's drop-off, Blackjack's win).
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from agenthub.errors import ConfigError
from agenthub.protocols import StepTuple
from agenthub.specs import EnvSpec, resolve_factory
from agenthub.types import Action, TaskId, TaskSplit

PREFIX = "gym:"
SPLITS = {"train": TaskSplit.range(0, 10_000), "test": TaskSplit.range(10_000, 11_000)}
DEFAULT_MAX_TURNS = 100
"""For envs registered without ``max_episode_steps``."""

# Action names of gymnasium's own discrete envs, in action order, so a model can say
# "left" instead of "0". Any other env takes numbers, or names given as env_kwargs.action_names.
KNOWN_ACTION_NAMES: dict[str, list[str]] = {
    "FrozenLake": ["left", "down", "right", "up"],
    "FrozenLake8x8": ["left", "down", "right", "up"],
    "CliffWalking": ["up", "right", "down", "left"],
    "Taxi": ["south", "north", "east", "west", "pickup", "dropoff"],
    "Blackjack": ["stick", "hit"],
    "CartPole": ["push left", "push right"],
    "MountainCar": ["accelerate left", "do not accelerate", "accelerate right"],
    "Acrobot": ["torque -1", "torque 0", "torque +1"],
}

Renderer = Callable[[gymnasium.Env[Any, Any], Any], str]

_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def ansi_to_text(rendered: str) -> str:
    """Drop colour codes, keeping highlighted cells visible as ``[X]``.

    Toy-text envs mark the player with a background colour (FrozenLake) that would
    otherwise vanish; foreground colours only decorate and are dropped.
    """
    out: list[str] = []
    highlighted = False
    pos = 0
    for match in _SGR.finditer(rendered):
        out.append(rendered[pos : match.start()])
        pos = match.end()
        codes = {int(c) for c in match.group(1).split(";") if c}
        background = any(40 <= c <= 47 or 100 <= c <= 107 for c in codes)
        if background and not highlighted:
            out.append("[")
            highlighted = True
        elif highlighted and (not codes or 0 in codes or 49 in codes):
            out.append("]")
            highlighted = False
    out.append(rendered[pos:])
    if highlighted:
        out.append("]")
    return "".join(out).strip("\n")


def _json_safe(value: Any) -> Any:
    """``info`` goes over the wire as JSON: numpy values become plain ones, the rest is dropped."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): v for k, v in ((k, _json_safe(v)) for k, v in value.items()) if v is not _DROP}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return _DROP


_DROP = object()


def _base_name(gym_id: str) -> str:
    """``ALE/Pong-v5`` -> ``Pong``; ``FrozenLake-v1`` -> ``FrozenLake``."""
    return re.sub(r"-v\d+$", "", gym_id.rsplit(":", 1)[-1].rsplit("/", 1)[-1])


class GymTextEnv:
    """One gymnasium env behind the agenthub ``Environment`` protocol."""

    def __init__(
        self,
        gym_id: str,
        *,
        render: str | Renderer | None = None,
        action_names: Sequence[str] | None = None,
        make_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        kwargs = dict(make_kwargs or {})
        renderer = resolve_factory(render, what=f"gym:{gym_id} renderer") if render else None
        _gym_spec(gym_id)  # an unknown id is refused here, with what to install or type
        use_ansi = False
        if renderer is None:
            probe = gymnasium.make(gym_id, **kwargs)
            text_obs = isinstance(probe.observation_space, spaces.Text)
            use_ansi = not text_obs and "ansi" in probe.metadata.get("render_modes", [])
            probe.close()
            if not text_obs and not use_ansi:
                raise ConfigError(
                    f"gym:{gym_id} observes {probe.observation_space}, not text, and has no 'ansi' render mode; "
                    "name a function that turns (env, observation) into text: env_kwargs.render=package.module:function"
                )
        if use_ansi:
            kwargs["render_mode"] = "ansi"
        self.gym_id = gym_id
        self.env: gymnasium.Env[Any, Any] = gymnasium.make(gym_id, **kwargs)
        self._renderer = renderer
        self._use_ansi = use_ansi
        self._actions = self._action_names(action_names)
        self._done = False

    def _action_names(self, given: Sequence[str] | None) -> list[str] | None:
        space = self.env.action_space
        if isinstance(space, spaces.Text):
            return None
        if not isinstance(space, spaces.Discrete):
            raise ConfigError(
                f"gym:{self.gym_id} has action space {space}; agenthub serves gymnasium envs whose actions are "
                "Discrete or Text. Wrap the env in a gymnasium.ActionWrapper that makes them Discrete."
            )
        n = int(space.n)
        names = list(given) if given is not None else KNOWN_ACTION_NAMES.get(_base_name(self.gym_id))
        if names is None:
            return [str(int(space.start) + i) for i in range(n)]
        if len(names) != n or len({name.lower() for name in names}) != n:
            raise ConfigError(
                f"gym:{self.gym_id} has {n} actions, so action_names needs {n} distinct names; got {list(names)}"
            )
        return [str(name) for name in names]

    def _text(self, observation: Any) -> str:
        if self._renderer is not None:
            text = self._renderer(self.env, observation)
            if not isinstance(text, str):
                raise TypeError(f"the renderer for gym:{self.gym_id} returned {type(text).__name__}, not str")
            return text
        if self._use_ansi:
            return ansi_to_text(str(self.env.render()))
        return str(observation)

    def _info(self, info: Mapping[str, Any]) -> dict[str, Any]:
        safe = _json_safe(info)
        out: dict[str, Any] = safe if isinstance(safe, dict) else {}
        if self._actions is not None:
            out["available_actions"] = list(self._actions)
        return out

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        if task_id is not None and not isinstance(task_id, int):
            raise ValueError(f"gym:{self.gym_id} task ids are integers (the reset seed), got {task_id!r}")
        game = task_id if task_id is not None else seed
        observation, info = self.env.reset(seed=game, options=dict(options) if options else None)
        if isinstance(self.env.action_space, spaces.Discrete):
            self.env.action_space.seed(game)
        self._done = False
        return self._text(observation), self._info(info)

    def _parse(self, action: Action) -> Any | None:
        if not isinstance(action, str):
            return None
        if self._actions is None:
            return action
        reply = action.strip().strip(".").strip().lower()
        for index, name in enumerate(self._actions):
            if reply in (name.lower(), str(int(self.env.action_space.start) + index)):  # type: ignore[attr-defined]
                return int(self.env.action_space.start) + index  # type: ignore[attr-defined]
        return None

    def step(self, action: Action) -> StepTuple:
        if self._done:
            return "The episode is over. Reset to play again.", 0.0, True, False, self._info({})
        parsed = self._parse(action)
        if parsed is None:
            choices = ", ".join(self._actions or [])
            shown = action if isinstance(action, str) else f"a call to {action.name}"
            text = f"{json.dumps(shown)[:80]} is not an action here. Reply with one of: {choices}."
            return text, 0.0, False, False, {**self._info({}), "invalid_action": True}
        observation, reward, terminated, truncated, info = self.env.step(parsed)
        self._done = bool(terminated or truncated)
        out = self._info(info)
        if terminated:
            out["won"] = bool(info.get("is_success", float(reward) > 0))
        return self._text(observation), float(reward), bool(terminated), bool(truncated), out

    def close(self) -> None:
        self.env.close()


def _gym_spec(gym_id: str) -> Any:
    """gymnasium's spec of ``ID`` or ``module:ID`` (the module registers the id when imported)."""
    module, sep, bare_id = gym_id.rpartition(":")
    if sep:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ConfigError(f"gym:{gym_id}: cannot import {module!r} ({exc}); pip install the package") from None
    try:
        return gymnasium.spec(bare_id)
    except gymnasium.error.Error as exc:
        raise ConfigError(
            f"gymnasium has no environment {bare_id!r} ({exc}); for an env registered by another package "
            "say env=gym:package:ID (e.g. gym:minigrid:MiniGrid-Empty-5x5-v0), and check the id with "
            "gymnasium.pprint_registry()"
        ) from None


def gym_env_spec(name: str) -> EnvSpec:
    """The EnvSpec for ``gym:ID`` (``name`` with or without the prefix)."""
    gym_id = name.removeprefix(PREFIX)
    spec = _gym_spec(gym_id)
    names = KNOWN_ACTION_NAMES.get(_base_name(gym_id))
    action_hint = f"one of: {', '.join(names)}" if names else "one of the available actions"
    return EnvSpec(
        name=PREFIX + gym_id,
        factory=lambda **kwargs: _make(gym_id, **kwargs),
        splits=SPLITS,
        default_max_turns=spec.max_episode_steps or DEFAULT_MAX_TURNS,
        description=f"gymnasium's {gym_id}, with text observations",
        version=f"gymnasium-{importlib.metadata.version('gymnasium')}",
        instructions=(
            f"You are playing the gymnasium environment {gym_id}. Each observation shows the current state "
            f"as text. Reply with one action only: {action_hint}."
        ),
    )


def _make(
    gym_id: str, *, render: str | None = None, action_names: Sequence[str] | None = None, **make_kwargs: Any
) -> GymTextEnv:
    """``env_kwargs``: ``render`` and ``action_names``; the rest go to ``gymnasium.make``."""
    return GymTextEnv(gym_id, render=render, action_names=action_names, make_kwargs=make_kwargs)
