"""``env=textarena:NAME``: a TextArena game served as an agenthub env, with one seat per player.

TextArena (``pip install 'agenthub[textarena]'``) registers its games by id (``TicTacToe-v0``,
``ConnectFour-v0``, ``KuhnPoker-v0``, ``SimpleNegotiation-v0``...). The importer builds the game
with ``textarena.make(NAME)`` and plays it without TextArena's wrappers, so that:

- **seats** are TextArena's player ids. The number of players is the first of 2, 1, 3, 4, 5, 6
  the game accepts at ``reset``; a one-player game is served as a single-player env.
- **the task id** is the seed given to the game's ``reset`` (``train`` 0-99,999, ``test``
  100,000-100,999), so a task is as reproducible as TextArena makes a seed.
- **an observation** is what the game sent the seat on turn since its previous turn, one line per
  message, ``[GAME] ...`` or ``[Player N] ...``: a model keeps the game's history in its own
  conversation. The first one carries the game's rules.
- **an action** is the seat's text; one without square brackets is wrapped in them, as
  TextArena's ``ActionFormattingWrapper`` does. An invalid move is answered by the game's own
  rules (usually one retry, then the game is lost).
- **rewards** are TextArena's at the end of the game (``close()``: 1 win, -1 loss, 0 draw in
  most games), 0 before it; every seat's final observation holds the game's last messages and
  why it ended.

TextArena seeds Python's global ``random`` at ``reset`` and games draw cards and dice from it
while they are played. So that sessions do not draw from one another's generator, each session
keeps its own state of that generator, swapped in around every call into the game under one
process-wide lock (TextArena's calls are cheap, so they run one at a time). A fresh game is built
at every reset, as some games keep state across resets (Kuhn Poker's deck). Games that call a
model or the network (a judge, an online opponent) are not served.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import random
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agenthub.errors import ConfigError
from agenthub.protocols import SeatStep, StepTuple
from agenthub.specs import EnvSpec
from agenthub.types import Action, TaskId, TaskSplit

PREFIX = "textarena:"
SPLITS = {"train": TaskSplit.range(0, 100_000), "test": TaskSplit.range(100_000, 101_000)}
PLAYER_COUNTS = (2, 1, 3, 4, 5, 6)
"""The numbers of players tried, in order, to find one the game accepts."""
INSTALL_HINT = "pip install 'agenthub[textarena]' (textarena 0.7.4)"
GAME_ID = -1
"""TextArena's sender id for the game's own messages."""
_GLOBAL_RANDOM = threading.Lock()
"""Held while a session's generator state is swapped into Python's global ``random``."""
T = TypeVar("T")


def _textarena() -> Any:
    try:
        return importlib.import_module("textarena")
    except ImportError as exc:
        raise ConfigError(f"env=textarena:NAME needs textarena ({exc}); {INSTALL_HINT}") from None


def game_names() -> list[str]:
    """Every game id TextArena registers."""
    return sorted(_textarena().envs.registration.ENV_REGISTRY)


def make_game(name: str) -> Any:
    """TextArena's game ``name`` without its wrappers, explained when the name is wrong."""
    ta = _textarena()
    if name not in ta.envs.registration.ENV_REGISTRY:
        close = [g for g in game_names() if g.lower().startswith(name.lower().split("-")[0])]
        hint = f"did you mean {', '.join(close[:8])}? " if close else ""
        raise ConfigError(
            f"TextArena has no game {name!r}; {hint}`python -c 'import textarena; "
            "textarena.pprint_registry_detailed()'` lists them all"
        )
    game = ta.make(name)
    while isinstance(game, ta.Wrapper):
        game = game.env
    return game


def player_count(name: str) -> int:
    """The first of ``PLAYER_COUNTS`` that game ``name`` accepts."""
    game = make_game(name)
    refusals = []
    for players in PLAYER_COUNTS:
        try:
            game.reset(num_players=players, seed=0)
        except Exception as exc:  # TextArena refuses a player count with an AssertionError or ValueError
            refusals.append(f"{players}: {type(exc).__name__}: {exc}")
            continue
        return players
    raise ConfigError(
        f"textarena:{name} could not be started with {', '.join(map(str, PLAYER_COUNTS))} players "
        f"({'; '.join(refusals)[:500]}); it may need a model or the network, which the importer does not serve"
    )


def _as_json(value: Any) -> Any:
    """``value`` with every key a string and everything else JSON can hold (the rest as text)."""
    return json.loads(json.dumps(value, default=str))


def _bracketed(action: Action) -> str:
    text = action if isinstance(action, str) else f"{action.name} {json.dumps(action.arguments)}"
    return text if "[" in text or "]" in text else f"[{text}]"


def _seed_of(task_id: TaskId | None, seed: int | None, name: str) -> int:
    chosen = task_id if task_id is not None else (seed if seed is not None else 0)
    if isinstance(chosen, bool) or not isinstance(chosen, int) or chosen < 0:
        raise ValueError(f"textarena:{name} task ids are non-negative integers (the game's seed), got {chosen!r}")
    return chosen


class _TextArenaGame:
    """What the single- and multi-player adapters share: building, resetting and reading the game."""

    def __init__(self, name: str, players: int) -> None:
        self.name = name
        self.players = players
        self.game = make_game(name)
        self._random_state: Any = None
        self._done = True

    def _own_random(self, call: Callable[[], T]) -> T:
        """Run ``call`` with this session's state of Python's global ``random`` swapped in."""
        with _GLOBAL_RANDOM:
            outside = random.getstate()
            if self._random_state is not None:
                random.setstate(self._random_state)
            try:
                return call()
            finally:
                self._random_state = random.getstate()
                random.setstate(outside)

    def _reset(self, task_id: TaskId | None, seed: int | None, options: Mapping[str, Any] | None) -> tuple[str, int]:
        if options:
            raise ValueError(f"textarena:{self.name} takes no reset options, got {sorted(options)}")
        chosen = _seed_of(task_id, seed, self.name)
        self.game = make_game(self.name)
        self._random_state = None
        self._own_random(lambda: self.game.reset(num_players=self.players, seed=chosen))
        self._done = False
        seat, messages = self.game.get_observation()
        return self._text(messages), int(seat)

    def _play(self, action: Action) -> tuple[bool, dict[str, Any]]:
        done, info = self._own_random(lambda: self.game.step(_bracketed(action)))
        return bool(done), _as_json(info or {})

    def _text(self, messages: list[tuple[int, str, Any]]) -> str:
        roles = self.game.state.role_mapping
        lines = []
        for sender, message, _kind in messages:
            who = "GAME" if sender == GAME_ID else roles.get(sender, f"Player {sender}")
            lines.append(f"[{who}] {str(message).strip()}")
        return "\n".join(lines)

    def _end(self) -> tuple[dict[int, str], dict[int, float], dict[str, Any]]:
        """Each seat's final observation and reward, and the game's account of the end."""
        self._done = True
        closed = self.game.close()
        rewards_by_id, game_info = closed if isinstance(closed, tuple) else (closed, {})
        rewards = {int(k): float(v) for k, v in (rewards_by_id or {}).items()}
        best = max(rewards.values(), default=0.0)
        leaders = sum(1 for s in range(self.players) if rewards.get(s, 0.0) == best)
        texts = {}
        for seat in range(self.players):
            pending = self.game.state.observations.get(seat, [])
            reason = (game_info or {}).get(seat, {}).get("reason") or "the game is over"
            mine = rewards.get(seat, 0.0)
            if self.players == 1:
                verdict = f"your reward is {mine:g}"
            else:
                verdict = "you won" if mine == best and leaders == 1 else "a draw" if mine == best else "you lost"
            texts[seat] = "\n".join(filter(None, [self._text(pending), f"[GAME] Game over ({verdict}): {reason}"]))
        info = {"game_info": _as_json({str(k): v for k, v in (game_info or {}).items()})}
        return texts, rewards, info

    def close(self) -> None:
        self._done = True


class TextArenaEnv(_TextArenaGame):
    """A TextArena game of two or more players: an ``agenthub.MultiPlayerEnvironment``."""

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any], int]:
        text, seat = self._reset(task_id, seed, options)
        return text, {}, seat

    def step(self, seat: int, action: Action) -> SeatStep:
        if self._done:
            text = "The game is over. Reset to play again."
            return SeatStep(dict.fromkeys(range(self.players), text), {}, True, False, {}, seat)
        if seat != self.game.state.current_player_id:
            raise RuntimeError(
                f"seat {seat} stepped, but TextArena has player {self.game.state.current_player_id} on turn"
            )
        done, info = self._play(action)
        if done:
            texts, rewards, end_info = self._end()
            return SeatStep(texts, rewards, True, False, {**info, **end_info}, seat)
        on_turn, messages = self.game.get_observation()
        return SeatStep({int(on_turn): self._text(messages)}, {}, False, False, info, int(on_turn))


class TextArenaSoloEnv(_TextArenaGame):
    """A one-player TextArena game (a puzzle): an ``agenthub.Environment``."""

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        text, _seat = self._reset(task_id, seed, options)
        return text, {}

    def step(self, action: Action) -> StepTuple:
        if self._done:
            return "The game is over. Reset to play again.", 0.0, True, False, {}
        done, info = self._play(action)
        if done:
            texts, rewards, end_info = self._end()
            reward = rewards.get(0, 0.0)
            return texts[0], reward, True, False, {**info, **end_info, "won": reward > 0}
        _seat, messages = self.game.get_observation()
        return self._text(messages), 0.0, False, False, info


def textarena_env_spec(name: str) -> EnvSpec:
    """The EnvSpec for ``textarena:NAME`` (``name`` with or without the prefix)."""
    game = name.removeprefix(PREFIX)
    players = player_count(game)  # fails here, with a hint, rather than at the first session
    adapter = TextArenaEnv if players > 1 else TextArenaSoloEnv
    return EnvSpec(
        name=PREFIX + game,
        factory=lambda **kwargs: adapter(game, players, **kwargs),
        splits=SPLITS,
        default_max_turns=100,  # the game ends itself; this bounds one that does not
        description=f"TextArena's {game} for {players} player{'s' if players > 1 else ''}",
        version=f"textarena-{importlib.metadata.version('textarena')}",
        instructions=(
            f"You are playing {game}, a text game from TextArena. The first message gives the rules. Each turn, "
            "answer with your move in square brackets, in the form the game asks for, e.g. [4]."
        ),
        players=players,
        seats=tuple(f"Player {s}" for s in range(players)) if players > 1 else None,
        inline_calls=True,  # TextArena's games are pure Python and cheap
    )
