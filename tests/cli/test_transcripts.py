"""What a user sees from each front-door command: one good and one bad invocation each, with the exit code.

Each runs the real CLI (``agenthub.cli.main.main``, what ``python -m agenthub`` calls) with its output
captured, on the built-in ``guess`` env and its oracle, so no plugin is needed. The assertions are on the
lines a user reads and copies (commands, hints, verdicts), never on timings or ports.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from agenthub.cli import plugins_command
from agenthub.cli.main import main


class Transcript:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    def lines(self) -> list[str]:
        return self.out.splitlines()


Agenthub = Callable[..., Transcript]


@pytest.fixture
def agenthub(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Agenthub:
    """``agenthub(*argv)``: the command's exit code and what it printed, as a shell would show them."""
    monkeypatch.chdir(tmp_path)  # a run directory, if one is written, lands here
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: rich tables keep each row on one line

    def run(*argv: str) -> Transcript:
        capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return Transcript(code, out, err)

    return run


def test_play(agenthub: Agenthub) -> None:
    good = agenthub("play", "env=guess", "task_id=10007")
    assert good.code == 0, good.err
    assert re.match(r"env 'guess' at http://127\.0\.0\.1:\d+, agent 'guess-oracle'$", good.lines()[0])
    assert good.lines()[1] == "task 10007"
    assert "Correct! The number was" in good.out
    assert re.search(r"^outcome: success   reward: 1   turns: \d+$", good.out, re.MULTILINE)

    bad = agenthub("play", "env=guess", "seat=1")
    assert bad.code == 2 and bad.out == ""
    assert bad.err.startswith("agenthub play: error: env 'guess' is single-player; ")
    assert "seat= are for multi-player envs (tictactoe, ...)" in bad.err


def test_eval(agenthub: Agenthub, tmp_path: Path) -> None:
    run_id = "a-run-id-long-enough-that-the-resume-line-is-wider-than-the-terminal-" + "x" * 40
    good = agenthub("eval", "env=guess", "n=2", f"run_id={run_id}")
    assert good.code == 0, good.err
    assert "guess · agent guess-oracle · k=1" in good.out
    assert re.search(r"│ overall +│ +2 │ +│ +1\.000 │ +1\.000 │", good.out)
    assert "outcomes: {'success': 2}" in good.out
    # the resume command on one line, whole, to copy and paste however long the path
    run_dir = Path("runs") / run_id
    assert f"run saved in {run_dir}  (resume with: agenthub eval --resume {run_dir})" in good.lines()
    assert (tmp_path / run_dir).is_dir()

    bad = agenthub("eval", "env=guess", "seat=1")
    assert bad.code == 2
    assert bad.err.strip() == (
        "agenthub eval: error: env 'guess' is single-player; seat= is for multi-player envs (tictactoe, ...): "
        "leave it out"
    )
    assert "opponent=" not in bad.err  # nothing suggests a setting that would be refused next


def test_run_dry_run_names_the_install_command_of_a_trainer_not_installed(agenthub: Agenthub) -> None:
    if importlib.util.find_spec("agenthub_trainer_verl") is not None:
        pytest.skip("trainer-verl is installed here: it is not an unknown trainer")
    bad = agenthub("run", "trainer=verl", "env=guess", "--dry-run")
    assert bad.code == 2 and bad.out == ""
    assert bad.err.startswith("agenthub run: error: unknown trainer 'verl'; ")
    assert "install it with `agenthub install trainer-verl`" in bad.err


def test_run_dry_run_prints_the_plan(agenthub: Agenthub) -> None:
    # Trainer plugins pin conflicting frameworks, so each has its own virtualenv (.ci/run), never this one;
    # there plugins/trainers/trl/tests/test_trl_cli_sft.py checks the whole dry-run output.
    pytest.importorskip(
        "agenthub_trainer_trl", reason="`run --dry-run` needs a trainer plugin; none is installed in this venv"
    )
    good = agenthub("run", "trainer=trl", "env=guess", "steps=1", "--dry-run")
    assert good.code == 0, good.err
    assert "trainer: trl" in good.lines() and "# would run: GRPO" in good.out


def test_check(agenthub: Agenthub) -> None:
    good = agenthub("check", "env=guess")
    assert good.code == 0, good.out + good.err
    assert re.match(r"conformance of env 'guess' at http://127\.0\.0\.1:\d+:$", good.lines()[0])
    assert any(line.startswith("  PASS  reset") for line in good.lines())
    assert any(line.startswith("  SKIP  seat_rewards") for line in good.lines())
    # a skipped check is counted apart, not as passed
    assert re.fullmatch(r"\d+ passed, 1 skipped, 0 failed", good.lines()[-1])

    bad = agenthub("check")
    assert bad.code == 2 and bad.out == ""
    assert bad.err.strip() == (
        "agenthub check: error: say which env to check: env=NAME (an installed env) or url=http://HOST:PORT"
    )


def test_install_dry_run(agenthub: Agenthub) -> None:
    good = agenthub("install", "--dry-run", "env-wordle")
    assert good.code == 0, good.err
    assert re.fullmatch(r"\$ \S+ -m pip install \S*plugins/envs/wordle", good.lines()[-1])  # this checkout's copy

    bad = agenthub("install", "--dry-run", "sciwrld")
    assert bad.code == 2 and bad.out == ""
    assert bad.err.startswith("agenthub install: error: unknown plugin 'sciwrld'; did you mean 'sciworld'?")
    assert "env-sciworld" in bad.err


def test_plugins(agenthub: Agenthub, monkeypatch: pytest.MonkeyPatch) -> None:
    # an importer whose package is missing: its install hint must survive rich, brackets and all
    missing = ("reasoning-gym", "agenthub-test-no-such-distribution", "reasoning_gym:NAME")
    monkeypatch.setattr(
        plugins_command,
        "IMPORTERS",
        (*plugins_command.IMPORTERS[:1], (*missing, "pip install 'agenthub[reasoning-gym]'")),
    )
    good = agenthub("plugins")
    assert good.code == 0, good.err
    assert good.lines()[0].strip() == "agenthub plugins"
    assert re.search(
        r"│ builtin +│ agenthub +│ [\d.]+\S* +│ agent: guess-oracle, .*env: guess, trail, tictactoe", good.out
    )
    assert re.search(r"│ reasoning-gym +│ agenthub-test-no-such-distribution +│ - +│ env: reasoning_gym:NAME", good.out)
    assert "reasoning-gym: not installed: pip install 'agenthub[reasoning-gym]'" in good.lines()

    bad = agenthub("plugins", "--jsn")
    assert bad.code == 2 and bad.out == ""
    assert bad.err.splitlines() == [
        "usage: agenthub plugins [-h] [--json]",
        "agenthub plugins: error: unrecognized arguments: --jsn",
    ]
