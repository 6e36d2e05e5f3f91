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

A game that cannot run here is refused when it is looked up, in one line that says why
(``GameUnavailableError``): its source needs a newer Python (Chess and Checkers use Python 3.12's
f-strings), it downloads NLTK data when imported (``nltk.download`` is replaced, around every call
into TextArena, by one that only looks for the data on this machine and raises if it is missing:
there is no network at run time), or it lacks a dependency. An action longer than
``MAX_ACTION_CHARS`` is refused by the server before it reaches the game, whose parsers are not
ours to keep linear.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import json
import random
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from agenthub.errors import ConfigError, PluginError
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
MAX_ACTION_CHARS = 2_000
"""Longest action the server passes to a game (``EnvSpec.max_action_chars``). A move is a few words, and
some games' own parsers are quadratic in it: on 32,768 characters of ``[`` Bandit and ColonelBlotto take
over 30 s; on 2,000 (seven hostile patterns against each of the 171 games served), the worst are
ConnectFour-v0-large's 1.0 s and LinesOfAction's 0.9 s, on 2 cores under a load of 15 to 25 (a
quadratic parser: a quarter of that on 1,000). A model that reasons before its move must keep its
reply this short, or its policy must send only the move."""
_GLOBAL_RANDOM = threading.RLock()
"""Held while a session's generator state is swapped into Python's global ``random``, and while
``nltk.download`` is replaced (re-entrant: building a game for a reset happens under it)."""
PROBE_MOVE = "[@@ not a move @@]"
"""The invalid move a game must answer, at lookup, without raising."""
_NLTK_DOWNLOAD = re.compile(r"nltk\.download\('([\w.-]{1,80})'\)")
"""The resource NLTK's own LookupError message tells one to download (NLTK's text, never an agent's)."""
_NLTK_DIRS = ("corpora", "taggers", "tokenizers", "models", "chunkers", "grammars", "misc", "sentiment", "stemmers")
T = TypeVar("T")


class GameUnavailableError(PluginError):
    """A TextArena game that cannot be served here; the message says why and what to do."""


class NltkDataMissing(Exception):
    """NLTK data that a game asked ``nltk.download`` for and this machine does not have."""

    def __init__(self, resources: list[str]) -> None:
        self.resources = resources
        super().__init__(", ".join(resources))


_refused_downloads: list[str] = []
"""What ``nltk.download`` was asked for and did not find while ``_no_downloads`` is active (under its lock)."""


def _one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters: third-party messages can span screens."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _nltk_has(resource: str) -> bool:
    """Whether NLTK data ``resource`` (``"words"``) is on this machine, found without the network."""
    find = importlib.import_module("nltk.data").find
    for folder in _NLTK_DIRS:
        for name in (f"{folder}/{resource}", f"{folder}/{resource}.zip"):
            try:
                find(name)
            except LookupError:
                continue
            return True
    return False


def _offline_download(info_or_id: Any = None, *args: Any, **kwargs: Any) -> bool:
    """Stands in for ``nltk.download``: True when the data is already here, else False (as a failed download)."""
    wanted = [info_or_id] if isinstance(info_or_id, str) else list(info_or_id or [])
    missing = [str(r) for r in wanted if not _nltk_has(str(r))]
    _refused_downloads.extend(r for r in missing if r not in _refused_downloads)
    return not missing


@contextlib.contextmanager
def _no_downloads() -> Iterator[None]:
    """Replace ``nltk.download`` while TextArena's code runs, so it never reaches for the network.

    A failure inside, after a download was refused, is raised as ``NltkDataMissing`` naming every
    resource refused, so that one message lists all the data to fetch.
    """
    try:
        nltk: Any = importlib.import_module("nltk")
    except ImportError:  # a game that needs nltk then says so itself, as a missing module
        yield
        return
    with _GLOBAL_RANDOM:
        real = nltk.download
        nltk.download = _offline_download
        _refused_downloads.clear()
        try:
            yield
        except Exception as exc:
            # a game's module imported once (its downloads refused) fails later in NLTK's own LookupError
            named = _NLTK_DOWNLOAD.findall(str(exc)) if isinstance(exc, LookupError) else []
            if _refused_downloads or named:
                raise NltkDataMissing(list(dict.fromkeys([*_refused_downloads, *named]))) from exc
            raise
        finally:
            nltk.download = real


def _why_unavailable(name: str, exc: BaseException) -> str:
    """One line on why game ``name`` cannot be built here, and what would let it."""
    if isinstance(exc, NltkDataMissing):
        listed = " ".join(exc.resources)
        return (
            f"textarena:{name} downloads NLTK data ({', '.join(exc.resources)}) when it is imported, and nothing "
            f"may reach the network at run time; fetch it once with `python -m nltk.downloader {listed}`, "
            "then the game is served offline"
        )
    if isinstance(exc, SyntaxError):
        path = str(exc.filename or "?")
        where = f"{path[path.find('textarena/') :] if 'textarena/' in path else path}, line {exc.lineno}"
        if sys.version_info < (3, 12) and str(exc.msg).startswith("f-string"):
            return (
                f"textarena:{name} needs Python >= 3.12: TextArena's source ({where}) uses f-strings that "
                f"Python {sys.version_info.major}.{sys.version_info.minor} cannot parse ({exc.msg}); "
                "serve it from a Python 3.12 environment"
            )
        return (
            f"textarena:{name} cannot be imported: TextArena's source does not parse on Python "
            f"{sys.version_info.major}.{sys.version_info.minor} ({where}: {exc.msg})"
        )
    if isinstance(exc, ImportError):
        missing = getattr(exc, "name", None)
        install = f"`pip install {missing}`" if missing else "installing it"
        return f"textarena:{name} needs a package that is not installed ({_one_line(exc)}); try {install}"
    if "API key" in str(exc) or "api_key" in str(exc):
        return (
            f"textarena:{name} is not served: the game calls a hosted model (a judge or an opponent) "
            f"({_one_line(exc, 160)}), and the importer serves only games that run offline"
        )
    return f"textarena:{name} could not be built here ({type(exc).__name__}: {_one_line(exc)})"


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
    try:
        with _no_downloads():
            game = ta.make(name)
    except Exception as exc:  # the game's module failed to import or its constructor failed
        raise GameUnavailableError(_why_unavailable(name, exc)) from None
    while isinstance(game, ta.Wrapper):
        game = game.env
    return game


def player_count(name: str) -> int:
    """The first of ``PLAYER_COUNTS`` that game ``name`` accepts."""
    game = make_game(name)
    refusals = []
    for players in PLAYER_COUNTS:
        try:
            with _no_downloads():
                game.reset(num_players=players, seed=0)
        except NltkDataMissing as exc:
            raise GameUnavailableError(_why_unavailable(name, exc)) from None
        except Exception as exc:  # TextArena refuses a player count with an AssertionError or ValueError
            refusals.append(f"{players}: {type(exc).__name__}: {_one_line(exc, 120)}")
            continue
        _probe_invalid_moves(name, game)
        return players
    raise GameUnavailableError(
        f"textarena:{name} could not be started with {', '.join(map(str, PLAYER_COUNTS))} players "
        f"({_one_line('; '.join(refusals), 500)}); it may need a model or the network, which the importer does "
        "not serve"
    )


def _probe_invalid_moves(name: str, game: Any) -> None:
    """Refuse a game that raises on invalid moves instead of answering them (up to eight in a row)."""
    for _ in range(8):
        if game.state.done:
            _check_rewards(name, game)
            return
        try:
            with _no_downloads():
                game.step(PROBE_MOVE)
        except Exception as exc:
            raise GameUnavailableError(
                f"textarena:{name} is not served: the game raises {type(exc).__name__} on an invalid move "
                f"({_one_line(exc, 160)}) instead of answering it, a defect of textarena "
                f"{importlib.metadata.version('textarena')}"
            ) from None


def _check_rewards(name: str, game: Any) -> None:
    """Refuse a game that ends with rewards that are not numbers (Countdown's swapped arguments)."""
    closed = game.close()
    rewards = (closed[0] if isinstance(closed, tuple) else closed) or {}
    odd = [v for v in rewards.values() if isinstance(v, bool) or not isinstance(v, int | float)]
    if odd:
        raise GameUnavailableError(
            f"textarena:{name} is not served: when invalid moves end the game it gives a reward that is not a "
            f"number ({_one_line(repr(odd[0]), 160)}), a defect of textarena {importlib.metadata.version('textarena')}"
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
        with _GLOBAL_RANDOM, _no_downloads():
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
    if "/" in game and game in _textarena().envs.registration.ENV_REGISTRY:
        raise GameUnavailableError(
            f"textarena:{game} cannot be served: an agenthub env name cannot hold the '/' of TextArena's id "
            "(it is part of URLs and paths); play another variant of the game"
        )
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
            "answer with your move in square brackets, in the form the game asks for, e.g. [4]; keep the whole reply "
            f"under {MAX_ACTION_CHARS:,} characters."
        ),
        players=players,
        seats=tuple(f"Player {s}" for s in range(players)) if players > 1 else None,
        inline_calls=True,  # TextArena's games are pure Python and cheap
        max_action_chars=MAX_ACTION_CHARS,
    )
