"""Checks before launch, played for real: env servers on loopback, each env's oracle, a tokenizer built here."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenthub import LocalServer
from agenthub.errors import ConfigError, UnknownNameError
from agenthub.plugins import set_plugin_host
from agenthub.rollout.token_assembly import ChatTemplateDeltas
from agenthub.training import LaunchRefused, TokenLimits, check_launch
from agenthub.training.launch_checks import PROMPT_SAMPLE
from agenthub.training.launch_measure import sample_tasks
from agenthub.types import TaskList


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The tiny model's tokenizer, loaded from its directory as a trainer loads it."""
    from transformers import AutoTokenizer

    from agenthub.testing.tiny_model import build_tiny_model

    return AutoTokenizer.from_pretrained(build_tiny_model(tmp_path_factory.mktemp("tiny")))


def test_textcraft_with_one_token_a_turn_is_refused_with_the_setting_to_change(tokenizer: Any) -> None:
    """The issue's case: `agenthub run trainer=trl env=textcraft` with the tiny model's max_tokens=1."""
    report = check_launch("textcraft", tokenizer, TokenLimits(max_tokens=1, max_context=1024))
    # The split's longest prompt does not fit 1024 tokens either: both keys are refused at once.
    assert [f.key for f in report.problems] == ["max_tokens", "max_context"]
    assert report.played_with == "the oracle 'textcraft-oracle'" and report.oracle_outcome == "success"
    assert report.cut_outcome != "success"
    assert report.action_tokens is not None and report.action_tokens > 1
    assert f"Set max_tokens>={report.action_tokens}" in report.problems[0].message
    with pytest.raises(LaunchRefused, match=r"refused before launch \(env 'textcraft'.*\n  - max_tokens: max_tokens=1"):
        report.raise_if_refused()


def test_the_action_limit_is_where_the_env_stops_understanding_the_cut_action(tokenizer: Any) -> None:
    """guess's oracle says `guess N`: one token short of its longest action, its episode no longer wins."""
    longest = check_launch("guess", tokenizer, TokenLimits(max_tokens=64)).action_tokens
    assert longest is not None
    assert not check_launch("guess", tokenizer, TokenLimits(max_tokens=longest)).problems
    short = check_launch("guess", tokenizer, TokenLimits(max_tokens=longest - 1))
    assert [f.key for f in short.problems] == ["max_tokens"]


def test_a_lenient_env_passes_with_a_prefix_of_its_actions(tokenizer: Any) -> None:
    """trail reads a reply's first l or r: one token of "left" is enough, and the checks agree."""
    report = check_launch("trail", tokenizer, TokenLimits(max_tokens=1, max_context=1024))
    assert report.problems == [] and report.cut_outcome == "success"
    assert "checks before launch passed (env 'trail', task 0, played with the oracle 'trail-oracle'" in report.summary()


def test_a_prompt_that_leaves_no_room_for_a_turn_is_refused_with_the_size_that_fits(tokenizer: Any) -> None:
    with LocalServer("textcraft") as server:
        report = check_launch("textcraft", tokenizer, TokenLimits(max_tokens=64, max_context=200), urls=[server.url])
        from agenthub import SyncEnvClient

        with SyncEnvClient(server.url) as client:
            info = client.info()
            listing = client.tasks("train")
            assert listing.ids is not None
            observations = {}
            for task_id in listing.ids:
                session = client.create_session(task_id, split="train")
                observations[task_id] = session.observation
                client.close_session(session.id)
    deltas = ChatTemplateDeltas(tokenizer, info.instructions)
    prompts = {t: len(deltas.prompt(text)) for t, text in observations.items()}
    # Every task rendered in the template, one by one: the checks' batched measure finds the same longest.
    prompt = max(prompts.values())
    assert report.prompt_task is not None and report.prompts_measured == len(prompts)
    assert report.prompt_tokens == prompt == prompts[report.prompt_task]
    first_turn = prompt + 64 + len(deltas.assistant_close)
    [problem] = [f for f in report.problems if f.key == "max_context"]
    assert f"is {prompt} tokens, {first_turn} with one model turn of max_tokens=64" in problem.message
    need = report.advice["max_context"]
    assert need >= first_turn and f"Set max_context>={need}" in problem.message
    passing = check_launch("textcraft", tokenizer, TokenLimits(max_tokens=64, max_context=need))
    assert not [f for f in passing.problems if f.key == "max_context"]


def test_a_large_split_is_sampled_evenly_and_a_small_one_whole() -> None:
    assert sample_tasks(TaskList(split="train", count=3, ids=["a", "b", "c"])) == ["a", "b", "c"]
    spread = sample_tasks(TaskList(split="train", count=100_000, start=1000, stop=101_000))
    assert len(spread) == PROMPT_SAMPLE and spread[0] == 1000 and spread[-1] == 100_999
    assert spread == sorted(set(spread))
    with pytest.raises(ConfigError, match=r"split 'dev' has no tasks; choose another split \(key split\)"):
        sample_tasks(TaskList(split="dev", count=0, ids=[]))


def test_verls_split_budget_names_its_own_keys(tokenizer: Any) -> None:
    limits = TokenLimits(max_tokens=64, max_prompt=50, max_response=32)
    report = check_launch("guess", tokenizer, limits)
    assert sorted(f.key for f in report.problems) == ["prompt_length", "response_length"]


def test_a_winning_episode_longer_than_the_context_or_the_horizon_is_refused(tokenizer: Any) -> None:
    """Such a run cannot score on the oracle's tasks: issue 32 turned these warnings into refusals."""
    report = check_launch("guess", tokenizer, TokenLimits(max_tokens=16, max_context=200), max_turns=1)
    assert report.oracle_turns is not None and report.oracle_turns > 1
    assert [f.key for f in report.problems] == ["max_context", "horizon"] == list(report.advice)
    assert report.episode_tokens is not None and report.advice["max_context"] > report.episode_tokens
    assert f"Set max_context>={report.advice['max_context']}" in report.problems[0].message
    assert report.advice["horizon"] == report.oracle_turns
    assert not check_launch(
        "guess", tokenizer, TokenLimits(max_tokens=16, max_context=report.advice["max_context"]), max_turns=5
    ).problems


def test_a_short_horizon_that_still_pays_is_a_warning_not_a_refusal(tokenizer: Any) -> None:
    """trail pays each right fork: a curriculum's one-turn horizon cannot win, but it can score."""
    report = check_launch("trail", tokenizer, TokenLimits(max_tokens=1, max_context=1024), max_turns=1)
    assert report.problems == [] and report.advice == {}
    [horizon] = report.warnings
    assert horizon.key == "horizon" and "but the run allows at most 1: such tasks cannot be won" in horizon.message


def test_an_unknown_split_is_refused_in_words(tokenizer: Any) -> None:
    with pytest.raises(ConfigError, match=r"env 'guess' has no split 'dev'; it has: .*\(key split\)"):
        check_launch("guess", tokenizer, TokenLimits(max_tokens=8), split="dev")


def test_an_unknown_env_is_refused_in_words_before_a_server_is_started(tokenizer: Any) -> None:
    with pytest.raises(UnknownNameError, match=r"unknown env 'guesss'; did you mean 'guess'\?.*agenthub install NAME"):
        check_launch("guesss", tokenizer, TokenLimits(max_tokens=8))


def test_env_servers_that_do_not_answer_are_refused_but_a_dry_run_goes_on(tokenizer: Any) -> None:
    with LocalServer("guess") as server:
        url = server.url  # a port that was just freed
    with pytest.raises(ConfigError, match=rf"the env server at {url} did not answer .*start it, or fix url="):
        check_launch("guess", tokenizer, TokenLimits(max_tokens=8), urls=[url])
    planned = check_launch("guess", tokenizer, TokenLimits(max_tokens=8), urls=[url], dry_run=True)
    assert planned.problems == [] and planned.summary() == (
        f"checks before launch: not run (the env server at {url} did not answer)"
    )


SILENT_PLUGIN = """
from agenthub import AgentSpec, EnvSpec, TaskSplit, hookimpl
from agenthub.types import AgentReply


class SilentEnv:
    '''Wins on "win" and pays nothing for it: the rewards are missing.'''

    def reset(self, *, task_id=None, seed=None, options=None):
        return "say win", {"available_actions": ["win", "lose"]}

    def step(self, action):
        return "over", 0.0, True, False, {"won": action == "win"}

    def close(self):
        pass


class Oracle:
    def start_episode(self, task, env):
        return self

    async def act(self, observation):
        return AgentReply(action="win")


@hookimpl
def agenthub_register_envs(register):
    register(EnvSpec(name="silent", factory=SilentEnv, splits={"train": TaskSplit.range(0, 3)},
                     default_max_turns=2, oracle="silent-oracle"))


@hookimpl
def agenthub_register_agents(register):
    register(AgentSpec(name="silent-oracle", factory=Oracle, env="silent"))
"""


@pytest.fixture
def silent_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An env plugin installed for this test only (in-process and for the server it starts)."""
    (tmp_path / "silent_plugin.py").write_text(textwrap.dedent(SILENT_PLUGIN))
    info = tmp_path / "agenthub_env_silent-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agenthub-env-silent\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agenthub]\nsilent = silent_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("AGENTHUB_PLUGINS", "silent")
    set_plugin_host(None)
    yield "silent"
    set_plugin_host(None)
    sys.modules.pop("silent_plugin", None)


def test_a_win_that_earns_nothing_is_refused_as_missing_rewards(silent_env: str, tokenizer: Any) -> None:
    report = check_launch(silent_env, tokenizer, TokenLimits(max_tokens=8, max_context=512))
    [problem] = report.problems
    assert problem.key == "env"
    assert "the oracle won task 0 of env 'silent' and earned a total reward of 0: rewards are missing" in (
        problem.message
    )


def test_advice_never_passes_what_the_model_reads_and_a_shorter_horizon_that_fits_passes(tokenizer: Any) -> None:
    """A context past the model's max_position_embeddings cannot be run (the hf agent refuses it): the checks
    advise the longest horizon whose episodes fit the model instead, and that advice passes them."""
    measured = check_launch("guess", tokenizer, TokenLimits(max_tokens=16, max_context=100_000))
    assert measured.problems == [] and measured.episode_tokens is not None and measured.oracle_turns is not None
    positions = measured.episode_tokens - 2  # the longest winning episode no longer fits the model
    limits = TokenLimits(max_tokens=16, max_context=100_000, model_positions=positions)
    report = check_launch("guess", tokenizer, limits)
    [problem] = report.problems
    assert problem.key == "max_context" and f"more than the {positions} positions the model reads" in problem.message
    assert f"tiny_model.max_position_embeddings={measured.episode_tokens + 1}" in problem.message
    turns, context = report.advice["horizon"], report.advice["max_context"]
    assert turns < measured.oracle_turns and context <= positions
    assert f"Set horizon={turns} and max_context between {context} and {positions}" in problem.message
    following = check_launch(
        "guess", tokenizer, TokenLimits(max_tokens=16, max_context=context, model_positions=positions), max_turns=turns
    )
    assert following.problems == [], [f.message for f in following.problems]


def test_a_first_turn_the_model_cannot_read_asks_for_a_longer_model(tokenizer: Any) -> None:
    report = check_launch("guess", tokenizer, TokenLimits(max_tokens=16, max_context=100_000, model_positions=100))
    [problem] = report.problems
    assert "Use a model that reads" in problem.message and "or lower max_tokens" in problem.message
    assert "max_context" not in report.advice and report.context_refused


def test_the_trainers_checks_read_the_models_positions_from_its_config(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from agenthub.testing.tiny_model import build_tiny_model
    from agenthub.training.tokenizers import model_positions, with_model_positions

    model = AutoTokenizer.from_pretrained(build_tiny_model(tmp_path / "model", max_position_embeddings=777))
    assert model_positions(model) == 777
    assert with_model_positions(TokenLimits(max_tokens=8), model).model_positions == 777
    model.save_pretrained(tmp_path / "tokenizer-only")
    assert model_positions(AutoTokenizer.from_pretrained(tmp_path / "tokenizer-only")) is None
