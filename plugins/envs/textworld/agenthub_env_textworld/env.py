"""``TextWorldEnv``: TextWorld's generated games behind agenthub's Environment protocol."""

from __future__ import annotations

import re
import threading
import unicodedata
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import textworld
from jericho import UnsupportedGameWarning

from agenthub import Action, StepTuple, TaskId, begin_reset

from .games import DEFAULT_GENERATION_TIMEOUT, GameCache
from .tasks import TRAIN_STOP, GameSpec, game_spec

RESET_OPTIONS = ("admissible_commands", "walkthrough")
"""What ``reset(options=...)`` accepts, each a bool, default False."""

MAX_COMMAND_BYTES = 198
"""The interpreter (jericho) reads at most this many bytes of a command and silently cuts the rest."""

BLOCKED_WORDS = frozenset({"quit", "q", "restart", "restore", "save", "script", "transcript", "unscript", "noscript"})
"""Interpreter meta-commands, answered by the env with what to do instead. A courtesy, not the guard: the games
have no grammar for them (``_worker.NO_FILE_ACTIONS``), and the interpreter sees only printable ASCII
(:func:`game_input`)."""

_OUTSIDE_GAME_ALPHABET = re.compile(r"[^\x20-\x7e]+")
"""What the interpreter must never see: frotz reads control characters 0x0e-0x15 as its own hot keys (record
the input to a file, play a file back, restart, quit, ...), and bytes above 0x7e as ZSCII extras."""

_BANNER = re.compile(r"\A(?:[ \t_|\\/$<>]*\n)+")
"""The TextWorld logo that opens every game: lines drawn only with these characters."""
_STATUS = re.compile(r"\s*>?[ \t]*-= [^\n]*? =-\s*-?\d+/\d+\s*\Z")
"""The status line jericho appends to every answer: ``-= Room =-score/moves``, after the prompt."""
_PROMPT = re.compile(r"\s*>\s*\Z")
_AFTER_THE_END = re.compile(r"\s*Would you like to RESTART, RESTORE a saved game, QUIT or UNDO the last command\?\s*\Z")
"""The interpreter's closing question, whose choices the env does not offer."""
_CENTRED = re.compile(r"^ {8,}", re.MULTILINE)
_GAPS = re.compile(r"\n{3,}")
_WORD = re.compile(r"[a-z0-9-]+")

_LOAD_LOCK = threading.Lock()
"""Loading a game fills TextWorld's process-wide caches (knowledge base, grammars), which are not thread-safe;
it also guards the process-wide warning filters while a game loads."""


def clean_feedback(text: str) -> str:
    """The game's answer without the logo, the prompt, the status line and runs of blank lines."""
    text = _STATUS.sub("", text)
    text = _PROMPT.sub("", text)
    text = _AFTER_THE_END.sub("", text)
    text = _BANNER.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _GAPS.sub("\n\n", _CENTRED.sub("", text))
    return text.strip() or "(The game printed nothing.)"


def game_input(action: str) -> str:
    """``action`` as the interpreter reads it: one line of printable ASCII with single spaces.

    Compatibility forms are folded first (NFKC: full-width letters are ASCII ones); any other character outside
    printable ASCII becomes a space, so it separates words rather than joining them. A newline would send two
    commands. Linear in the length of ``action``.
    """
    return " ".join(_OUTSIDE_GAME_ALPHABET.sub(" ", unicodedata.normalize("NFKC", action)).split())


def _refusal(command: str) -> str | None:
    """Why the env answers ``command`` itself instead of sending it to the game, if it does."""
    size = len(command.encode("utf-8"))
    if size > MAX_COMMAND_BYTES:
        return (
            f"That command is {size} bytes long; the game reads at most {MAX_COMMAND_BYTES}. "
            "Send one short command, such as 'look' or 'take coin'."
        )
    words = _WORD.findall(command.lower())
    blocked = sorted({w for w in words if w in BLOCKED_WORDS or w.startswith("tw-")})
    if blocked:
        return (
            f"'{blocked[0]}' is not available in this game: interpreter commands (quit, restart, restore, save, "
            "script, and TextWorld's tw-* commands) are switched off. Play with game actions such as "
            "'look', 'inventory', 'go north' or 'take coin'."
        )
    return None


def _options(chosen: Mapping[str, Any]) -> dict[str, bool]:
    for name, value in chosen.items():
        if not isinstance(value, bool):
            raise ValueError(f"reset option {name!r} must be true or false, got {value!r}")
    return {name: bool(chosen.get(name, False)) for name in RESET_OPTIONS}


class TextWorldEnv:
    """A TextWorld game (cooking, treasure hunter or coin collector), generated for the task id.

    Actions are text commands (``go north``, ``take carrot``, ``cook carrot
    with stove``) answered by the game itself; the env only removes the logo,
    the prompt and the status line from the answers. The reward of a step is
    the rise of TextWorld's score divided by the game's ``max_score``, so an
    episode's rewards add up to the share of the points earned, 1.0 when
    won. The episode terminates when the game is won or lost; the turn limit
    is the runner's (``EnvSpec.default_max_turns``, 50).

    ``reset(options={"admissible_commands": True})`` adds the commands the game
    accepts in the current state to ``info["available_actions"]``, at a cost in
    step time (see the README); ``{"walkthrough": True}`` adds TextWorld's
    winning command sequence to the first ``info``.

    >>> env = TextWorldEnv(cache_dir="/tmp/textworld-games")  # doctest: +SKIP
    >>> observation, info = env.reset(task_id=10_000)  # doctest: +SKIP
    >>> info["max_score"]  # doctest: +SKIP
    1
    """

    def __init__(
        self, *, cache_dir: str | Path | None = None, generation_timeout: float = DEFAULT_GENERATION_TIMEOUT
    ) -> None:
        """``cache_dir``: where generated games are kept (default: ``$AGENTHUB_TEXTWORLD_CACHE`` or
        ``~/.cache/agenthub/textworld``); ``generation_timeout``: seconds one game may take to generate."""
        self.cache = GameCache(cache_dir, timeout=generation_timeout)
        self._infos = textworld.EnvInfos(
            score=True, max_score=True, won=True, lost=True, objective=True, extras=["walkthrough"]
        )
        self._game: Any = None
        self._game_file: Path | None = None
        self._spec: GameSpec | None = None
        self._options: dict[str, bool] = {}
        self._score = 0
        self._max_score = 1
        self._moves = 0
        self._ended: str | None = None  # "won" or "lost"
        self._actions: list[str] = []

    def reset(
        self,
        *,
        task_id: TaskId | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        # A train task drawn with random.Random(seed), None meaning 0 (tasks.draw_task, the same draw).
        start = begin_reset(
            "textworld",
            task_id=task_id,
            seed=seed,
            options=options,
            train=range(TRAIN_STOP),
            known_options=RESET_OPTIONS,
            default_seed=0,
        )
        chosen = _options(start.options)
        spec = game_spec(start.task_id)
        game_file = self.cache.ensure(spec)
        if game_file != self._game_file or self._game is None:
            self.close()
            with _LOAD_LOCK, warnings.catch_warnings():
                # jericho warns that every TextWorld game lacks its hand-made bindings; TextWorld's wrappers
                # supply what they would. Under ``-W error`` that warning would make every reset fail.
                warnings.simplefilter("ignore", UnsupportedGameWarning)
                self._game = textworld.start(str(game_file), request_infos=self._infos)
            self._game_file = game_file
        self._infos.admissible_commands = chosen["admissible_commands"]
        # TextWorld's games draw nothing at random, but the interpreter's own generator is seeded from the
        # clock unless given a positive seed; give it one so every run is the same.
        self._game.seed(1 + (seed or 0) % (2**31 - 2))
        state = self._game.reset()
        self._spec, self._options = spec, chosen
        self._score, self._max_score = int(state["score"] or 0), max(1, int(state["max_score"]))
        self._moves, self._ended = int(state.get("moves") or 0), None
        self._actions = list(state["admissible_commands"]) if chosen["admissible_commands"] else []
        info = self._info()
        info.update(family=spec.family, level=spec.level, objective=str(state["objective"]))
        if chosen["walkthrough"]:
            info["walkthrough"] = [str(command) for command in state["extra.walkthrough"]]
        return clean_feedback(str(state["feedback"])), info

    def step(self, action: Action) -> StepTuple:
        if self._game is None or self._spec is None:
            raise RuntimeError("step() called before reset(); reset the environment first")
        if self._ended is not None:
            text = f"The game is over: you {self._ended}. Reset to play again."
            return text, 0.0, True, False, self._info()
        if not isinstance(action, str):
            text = "TextWorld takes text commands such as 'look', 'go north' or 'take coin', not tool calls."
            return text, 0.0, False, False, {**self._info(), "invalid_action": True}
        command = game_input(action)
        refusal = _refusal(command)
        if refusal is not None:
            return refusal, 0.0, False, False, {**self._info(), "invalid_action": True}
        state, _, _ = self._game.step(command)
        score = int(state["score"] or 0)
        reward = (score - self._score) / self._max_score
        moves = int(state.get("moves") or 0)
        if state["won"] or state["lost"]:
            self._ended = "won" if state["won"] else "lost"
        # The game counts a turn only for a command its parser understood (its last turn goes uncounted).
        understood = moves != self._moves or self._ended is not None
        self._score, self._moves = score, moves
        if self._options["admissible_commands"]:
            self._actions = [] if self._ended else list(state["admissible_commands"] or [])
        info = self._info()
        if not understood:
            info["invalid_action"] = True
        return clean_feedback(str(state["feedback"])), reward, self._ended is not None, False, info

    def close(self) -> None:
        game, self._game, self._game_file = self._game, None, None
        if game is not None:
            game.close()

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "score": self._score,
            "max_score": self._max_score,
            "won": self._ended == "won",
            "lost": self._ended == "lost",
            "moves": self._moves,
        }
        if self._options.get("admissible_commands"):
            info["available_actions"] = list(self._actions)
        return info
