"""A misspelt ``agent.KEY=``, ``opponent.KEY=`` or ``env_kwargs.KEY=`` is refused before anything starts,
with "did you mean" and the settings the plugin takes, on every command that takes them (issue 29 item 3);
an agent that cannot play its env is refused with the reason (item 4)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agenthub.agent_fit import refuse_unfit_agents
from agenthub.builtin.agents import RandomAgent
from agenthub.cli.main import main
from agenthub.cli.run_command import check_names
from agenthub.errors import ConfigError
from agenthub.option_checks import Settings, check_run_options, factory_settings
from agenthub.plugins import get_plugin_host
from agenthub.service.client import EnvClient
from agenthub.service.launcher import ThreadedServer
from agenthub.service.settings import ServiceSettings
from agenthub.specs import AgentSpec, EnvSpec
from agenthub.types import TaskSplit

AGENTHUB = [sys.executable, "-m", "agenthub"]


def agenthub(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """As a user runs it: a process of its own."""
    return subprocess.run([*AGENTHUB, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def in_process(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The same entry point, in this process (no interpreter start-up): exit code, stdout, stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# -- what a factory declares -----------------------------------------------------------------


def test_a_string_factory_is_read_from_its_source_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "heavy_env_for_option_checks.py").write_text(
        "import a_package_that_is_not_installed  # stands for torch, a JVM, a browser\n\n"
        "class HeavyEnv:\n    def __init__(self, *, size: int = 3, seed: int = 0) -> None:\n        pass\n\n"
        "def build(level, *, hard=False, **more):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert factory_settings("heavy_env_for_option_checks:HeavyEnv", may_import=False) == Settings(
        frozenset({"size", "seed"})
    )
    assert factory_settings("heavy_env_for_option_checks:build", may_import=False) == Settings(
        frozenset({"level", "hard"}), open=True
    )
    assert "heavy_env_for_option_checks" not in sys.modules
    # a name the source does not define plainly is left unchecked rather than imported
    assert factory_settings("heavy_env_for_option_checks:missing", may_import=False) is None


def test_classes_functions_and_lambdas_declare_their_settings() -> None:
    assert factory_settings("agenthub.builtin.agents:RandomAgent", may_import=False) == Settings(frozenset({"seed"}))
    assert factory_settings("agenthub.builtin.agents:GuessOracle", may_import=False) == Settings(frozenset())
    assert factory_settings(RandomAgent, may_import=False) == Settings(frozenset({"seed"}))
    assert factory_settings(lambda **kwargs: kwargs, may_import=False) == Settings(frozenset(), open=True)


def test_a_spec_may_name_its_settings_and_default_kwargs_count() -> None:
    def build(**settings: Any) -> Any:
        return settings

    named = EnvSpec("named-env", build, {"test": TaskSplit(start=0, stop=1)}, 5, settings=("depth",))
    options = _Options(env_kwargs={"detph": 2})
    with pytest.raises(ConfigError, match=r"env 'named-env' has no setting 'detph'; did you mean 'depth'\?"):
        check_run_options(named, options, import_agents=False)
    defaults = EnvSpec("defaults-env", "agenthub.builtin.guess:GuessNumberEnv", {}, 5, default_kwargs={"extra": 1})
    check_run_options(defaults, _Options(env_kwargs={"extra": 2, "high": 8}), import_agents=False)
    open_ended = AgentSpec("open-agent", build)
    assert factory_settings(open_ended.factory, may_import=False) == Settings(frozenset(), open=True)


class _Options:
    def __init__(self, **given: Any) -> None:
        self.agent: str | None = given.get("agent")
        self.agent_kwargs: dict[str, Any] = given.get("agent_kwargs", {})
        self.opponent: str | None = given.get("opponent")
        self.opponent_kwargs: dict[str, Any] = given.get("opponent_kwargs", {})
        self.env_kwargs: dict[str, Any] = given.get("env_kwargs", {})


# -- per command ------------------------------------------------------------------------------


def test_eval_refuses_a_misspelt_agent_setting_of_the_oracle_before_a_server_starts(tmp_path: Path) -> None:
    started = time.monotonic()
    result = agenthub("eval", "env=guess", "agent=oracle", "agent.tempreature=0.5", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert (
        "agenthub eval: error: agent 'oracle' (guess-oracle) has no setting 'tempreature'; it takes: (none); "
        "fix or drop agent.tempreature=" in result.stderr
    )
    assert "Traceback" not in result.stderr and not (tmp_path / "runs").exists()
    assert time.monotonic() - started < 60


def test_eval_refuses_a_misspelt_env_kwarg_and_an_opponent_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = in_process("eval", "env=guess", "env_kwargs.hihg=8", capsys=capsys)
    assert code == 2, err
    assert (
        "env 'guess' has no setting 'hihg'; did you mean 'high'? its settings: high, max_guesses; "
        "fix or drop env_kwargs.hihg=" in err
    )
    code, _, err = in_process(
        "eval", "env=tictactoe", "agent=random", "opponent=random", "opponent.sed=1", capsys=capsys
    )
    assert code == 2, err
    assert "opponent 'random' has no setting 'sed'; did you mean 'seed'? its settings: seed" in err
    assert not (tmp_path / "runs").exists()


def test_play_takes_agent_dot_key_and_refuses_a_misspelt_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = in_process("play", "env=guess", "agent=random", "agent.sed=1", capsys=capsys)
    assert code == 2, err
    assert "agenthub play: error: agent 'random' has no setting 'sed'; did you mean 'seed'?" in err
    code, out, err = in_process("play", "env=guess", "agent=random", "agent.seed=1", "env_kwargs.high=2", capsys=capsys)
    assert code == 0, out + err
    assert "outcome: " in out and "turns: " in out


def test_serve_and_check_refuse_a_misspelt_env_kwarg(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("serve", "check"):
        code, _, err = in_process(command, "env=guess", "env_kwargs.max_guess=3", capsys=capsys)
        assert code == 2, err
        assert f"agenthub {command}: error: env 'guess' has no setting 'max_guess'; did you mean 'max_guesses'?" in err


def test_check_passes_env_kwargs_and_agent_settings_on(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = in_process("check", "env=guess", "env_kwargs.high=8", "agent.seed=3", "sessions=2", capsys=capsys)
    assert code == 2, out + err  # agent.KEY= names a setting of the oracle, which takes none
    assert "agent 'oracle' (guess-oracle) has no setting 'seed'; it takes: (none)" in err
    given = ("check", "env=guess", "agent=oracle", "env_kwargs.high=8", "sessions=2", "--json")
    code, out, err = in_process(*given, capsys=capsys)
    assert code == 0, out + err
    assert json.loads(out)["passed"] is True


def test_run_refuses_misspelt_settings_from_the_source_without_importing_them() -> None:
    host = get_plugin_host()
    with pytest.raises(ConfigError, match="env 'guess' has no setting 'hihg'; did you mean 'high'"):
        check_names({"trainer": "any", "env": "guess", "env_kwargs": {"hihg": 3}}, host)
    with pytest.raises(ConfigError, match="opponent 'oracle' \\(tictactoe-oracle\\) has no setting 'depth'"):
        check_names({"env": "tictactoe", "opponent": "oracle", "opponent_kwargs": {"depth": 3}}, host)
    check_names({"env": "guess", "env_kwargs": {"high": 3}, "agent": "random", "agent_kwargs": {"seed": 1}}, host)


# -- an agent that cannot play its env ----------------------------------------------------------


class _Run:
    def __init__(self, env: str) -> None:
        self.env = env
        self.opponent: str | None = None
        self.split: str | None = None


async def _probe(url: str, env: str, agent: object) -> None:
    async with EnvClient(url) as client:
        await refuse_unfit_agents(client, _Run(env), "random", agent, {})


def test_the_random_agent_is_refused_on_an_env_that_lists_no_actions() -> None:
    pytest.importorskip("agenthub_env_wordle")
    with ThreadedServer(get_plugin_host().env("wordle"), ServiceSettings()) as server:
        with pytest.raises(ConfigError) as refused:
            asyncio.run(_probe(server.url, "wordle", RandomAgent()))
        asyncio.run(_probe(server.url, "wordle", object()))  # an agent that writes actions is let through
    host = get_plugin_host()  # the agents installed here that write actions (the hf agent needs torch)
    writers = ", ".join(f"agent={name}" for name in host.agents.names() if host.agents.get(name).writes_actions)
    assert writers and "agent=openai" in writers
    assert str(refused.value) == (
        "agent 'random' picks among the env's available_actions, and env 'wordle' gives none; use an agent that "
        f"writes actions ({writers} or the env's oracle 'wordle-oracle' (agent=oracle))"
    )


def test_the_random_agent_plays_an_env_that_lists_its_actions() -> None:
    with ThreadedServer(get_plugin_host().env("guess"), ServiceSettings()) as server:
        asyncio.run(_probe(server.url, "guess", RandomAgent()))
