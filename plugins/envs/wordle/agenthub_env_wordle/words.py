"""The shipped word lists (SCOWL, see ``data/NOTICE``), read once per process.

The lists are immutable after loading, so sharing them between environment
instances in different threads is safe.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


def _read(name: str) -> tuple[str, ...]:
    text = resources.files("agenthub_env_wordle").joinpath("data", name).read_text(encoding="utf-8")
    return tuple(line for line in text.split() if line)


@cache
def answers() -> tuple[str, ...]:
    """The secret words; task id ``i`` is ``answers()[i]``."""
    return _read("answers.txt")


@cache
def guess_list() -> tuple[str, ...]:
    """Every word a guess may be, answers included, sorted."""
    return _read("guesses.txt")


@cache
def allowed_guesses() -> frozenset[str]:
    return frozenset(guess_list())
