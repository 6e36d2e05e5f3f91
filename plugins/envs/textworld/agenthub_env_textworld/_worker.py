"""A game-generation worker: a child process that runs TextWorld's challenge generators.

Started by :class:`agenthub_env_textworld.generation.GeneratorPool` with
``PYTHONHASHSEED=0``: TextWorld's generators iterate over sets, so without a
fixed hash seed the same challenge and seed compile to different files in
different processes. A process of its own also keeps the generator's global
caches and its seconds of CPU away from the server's threads.

Protocol: one JSON request per line on stdin,
``{"challenge", "settings", "seed", "path"}``; one JSON reply per line,
``{"ok": true, "seed": used, "seconds": s}`` or ``{"ok": false, "error": "..."}``. The
replies go to what was stdout at start; anything the generator prints goes
to /dev/null. The worker exits on end of input, or after ``idle_seconds``
(its first argument) without a request.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
import traceback
import warnings
from typing import Any

NO_FILE_ACTIONS = """

Understand nothing as quitting the game.
Understand nothing as saving the game.
Understand nothing as restoring the game.
Understand nothing as restarting the game.
Understand nothing as verifying the story file.
Understand nothing as switching the story transcript on.
Understand nothing as switching the story transcript off.
"""
"""Inform 7 source appended to every game TextWorld generates: these out-of-world actions lose their grammar,
so the game answers their words as it answers any verb it does not know.

Why in the game and not in front of it: the interpreter (jericho's frotz) names a save or transcript file
after the command line and writes it to its working directory, and Inform's parser matches a word on its
first 9 letters ("transcripz" reads as "transcript") after dropping characters it cannot encode, so a word
filter in front of the game cannot be complete. The grammar the game understands is the allow-list."""

RESEED_STEP = 1_000_000
"""When a seed admits no quest, the next try adds this: above every task id, so it is no other task's seed."""

MAX_TRIES = 20


def generate(challenge: str, settings: dict[str, Any], seed: int, path: str) -> int:
    """Make and compile one game to ``path`` (``.z8``; its ``.json`` and ``.ni`` go beside it); return the seed used.

    Some seeds give a map where the level's quest cannot be placed (TextWorld raises
    ``QuestGenerationError`` and asks for another seed); the next seeds are tried in a fixed order.
    """
    import textworld
    from textworld.challenges import CHALLENGES
    from textworld.generator import QuestGenerationError

    _, make, _ = CHALLENGES[challenge]
    for attempt in range(MAX_TRIES):
        options = textworld.GameOptions()
        options.seeds = seed + attempt * RESEED_STEP
        options.path = path
        options.force_recompile = True
        try:
            game = make(dict(settings), options)
        except QuestGenerationError:
            continue
        compile_without_file_actions(game, path)
        return seed + attempt * RESEED_STEP
    raise QuestGenerationError(f"no quest fits the maps of {MAX_TRIES} seeds from {seed} on")


def compile_without_file_actions(game: Any, path: str) -> None:
    """TextWorld's ``compile_game`` (its logic to ``.json``, the story to ``path``) with :data:`NO_FILE_ACTIONS`
    appended to the Inform 7 source before it is compiled."""
    from textworld.generator.inform7 import compile_inform7_game, generate_inform7_source

    game.save(os.path.splitext(path)[0] + ".json")
    compile_inform7_game(generate_inform7_source(game) + NO_FILE_ACTIONS, path)


def _read_line(buffer: bytearray, idle_seconds: float) -> bytes | None:
    """The next request line, or None at end of input or after ``idle_seconds`` without one."""
    while b"\n" not in buffer:
        ready, _, _ = select.select([0], [], [], idle_seconds)
        if not ready:
            return None
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return None
        buffer.extend(chunk)
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line


def main() -> None:
    idle_seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the generator's own prints must not corrupt the replies
    warnings.simplefilter("ignore")
    buffer = bytearray()
    while (line := _read_line(buffer, idle_seconds)) is not None:
        started = time.perf_counter()
        try:
            request = json.loads(line)
            used = generate(request["challenge"], request["settings"], int(request["seed"]), request["path"])
            reply: dict[str, Any] = {"ok": True, "seed": used, "seconds": time.perf_counter() - started}
        except Exception as exc:
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
