"""An agent's command never makes the interpreter touch a file or leave the game it was given.

Two guards, each enforced below the env's own word checks: the games are compiled without the grammar of
Inform's out-of-world file and game commands (``_worker.NO_FILE_ACTIONS``), and the interpreter reads only
printable ASCII (``env.game_input``), so frotz's hot keys (control characters 0x0e-0x15: record the input to a
file, play one back, restart, quit) cannot be typed. Before them, a random tiny model's replies left
transcript files named after its commands in the server's working directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthub_env_textworld.env import TextWorldEnv, game_input
from agenthub_env_textworld.games import GameCache
from agenthub_env_textworld.tasks import task_id

COINS = task_id("test", "coin_collector", 1, 0)
"""Coin collector level 1, test game 0: a short walk, so the walkthrough after the attack is quick."""

HOT_KEYS = [chr(code) for code in range(0x0E, 0x16)]
"""frotz's ZC_HKEY_RECORD ... ZC_HKEY_HELP."""

ATTACKS = [
    # Inform matches a word on its first 9 letters: each of these reads as "transcript" to the game.
    "transcripz",
    "transcriptions on",
    "TRANSCRIPT",
    # Characters the env's word check splits on but the interpreter used to drop, joining the verb again.
    "scrip\x0et",
    "sav\x0ee",
    "tran\u200bscript",
    "res\u00adtore",
    # Full-width forms fold to ASCII (NFKC), so they meet the same grammar.
    "\uff53\uff43\uff52\uff49\uff50\uff54",
    "look. transcripz",
    "script on",
    "noscript",
    "verify",
    *(f"{key}recording" for key in HOT_KEYS),
    *(f"go {key}north" for key in HOT_KEYS),
]


@pytest.fixture
def env(cache: GameCache) -> Iterator[TextWorldEnv]:
    instance = TextWorldEnv(cache_dir=cache.root)
    yield instance
    instance.close()


@pytest.fixture
def working_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The interpreter names its files relative to the process's working directory: make it an empty one."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_no_command_writes_a_file_and_the_game_goes_on_to_be_won(
    env: TextWorldEnv, cache: GameCache, working_dir: Path
) -> None:
    _, info = env.reset(task_id=COINS, options={"walkthrough": True})
    for attack in ATTACKS:
        observation, reward, terminated, truncated, step_info = env.step(attack)
        assert (reward, terminated, truncated) == (0.0, False, False), attack
        assert "Recording" not in observation and "Playback" not in observation, (attack, observation)
        assert not (step_info["won"] or step_info["lost"]), (attack, observation)
    assert sorted(p.name for p in working_dir.iterdir()) == []
    # Nothing restarted, quit or rewound the game: its own walkthrough still wins it from here.
    rewards = [env.step(command)[1] for command in info["walkthrough"]]
    assert sum(rewards) == pytest.approx(1.0)


@pytest.mark.parametrize("word", ["transcripz", "script", "save", "restore", "quit", "restart", "verify"])
def test_the_game_itself_has_no_grammar_for_file_or_game_commands(
    env: TextWorldEnv, working_dir: Path, word: str
) -> None:
    """Sent past the env's word check, straight to the interpreter: the compiled game does not know the verb."""
    env.reset(task_id=COINS)
    state, _, _ = env._game.step(word)
    assert "That's not a verb I recognise." in str(state["feedback"]), state["feedback"]
    assert list(working_dir.iterdir()) == []


@pytest.mark.parametrize(
    "action, read",
    [
        ("look", "look"),
        ("  take\tcoin \n", "take coin"),
        ("scrip\x0et", "scrip t"),
        ("\uff4c\uff4f\uff4f\uff4b", "look"),
        ("take caf\u00e9", "take caf"),
        ("go\u2028north", "go north"),
        ("\x00\x1b[2J", "[2J"),
    ],
)
def test_the_interpreter_reads_printable_ascii_only(action: str, read: str) -> None:
    assert game_input(action) == read
