"""A run the checks before launch let through can score (issue 32): each seed env, the refusal's advice followed.

The settings of the issue's runs that never scored (textcraft with max_tokens=29,
maze, wordle and babyai with max_tokens=7, all at the TRL default
max_context=1024) are checked; the report's advice is applied; the checks then
pass, and a token policy that says the oracle's actions plays real episodes on
the env's server through agenthub's episode loop, within those settings, on the
split's longest prompt and on the oracle's longest episode: each ends won, with a
reward. The same policy at a refused setting ends truncated, so the refusal was
needed. The tiny model itself, sampled, plays turns at textcraft's advice where the
refused context gave its episodes no turn at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenthub import LocalServer
from agenthub.plugins import get_plugin_host
from agenthub.rollout.episode_loop import play_episode
from agenthub.rollout.policy import Generation, SamplingParams, TokenPolicy
from agenthub.service.client import EnvClient
from agenthub.testing.model_sampler import ModelSampler
from agenthub.training import LaunchReport, TokenLimits, check_launch
from agenthub.types import Outcome, Task, TaskId, Trajectory

TRL_MAX_CONTEXT = 1024
ISSUE_RUNS = {"textcraft": 29, "maze": 7, "wordle": 7, "babyai": 7}
"""Each seed env and the max_tokens of the issue's run that never scored."""


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model, as TRL's default run builds it."""
    from agenthub.testing.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny"), initializer_range=0.1)


@pytest.fixture(scope="module")
def tokenizer(tiny_model: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


class SaysTheOracle:
    """An engine whose model says the oracle's actions, in order, each ended by its end-of-turn token."""

    def __init__(self, tokenizer: Any, actions: list[str]) -> None:
        self.tokenizer = tokenizer
        self.actions = iter(actions)

    def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        ids = [*self.tokenizer.encode(next(self.actions), add_special_tokens=False), self.tokenizer.eos_token_id]
        ids = ids[: sampling.max_tokens]
        return Generation(ids, [-0.1] * len(ids), "stop" if ids[-1] == self.tokenizer.eos_token_id else "length")


async def _oracle_then_policy(
    url: str, env: str, task_id: TaskId, tokenizer: Any, limits: TokenLimits, turns: int
) -> Trajectory:
    oracle = get_plugin_host().agent(get_plugin_host().env(env).oracle or "").make()
    task = Task(env=env, task_id=task_id, split="train", max_turns=turns)
    async with EnvClient(url) as client:
        info = await client.info()
        won = await play_episode(client, oracle, task, env_info=info)
        assert won.outcome is Outcome.SUCCESS
        engine = SaysTheOracle(tokenizer, [str(t.action) for t in won.turns])
        policy = TokenPolicy(
            engine, tokenizer, SamplingParams(max_tokens=limits.max_tokens), max_context=limits.max_context or 0
        )
        return await play_episode(client, policy, task, env_info=info)


def _play(url: str, env: str, task_id: TaskId, tokenizer: Any, limits: TokenLimits, turns: int) -> Trajectory:
    return asyncio.run(_oracle_then_policy(url, env, task_id, tokenizer, limits, turns))


@pytest.fixture(scope="module", params=sorted(ISSUE_RUNS))
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    with LocalServer(request.param) as server:
        yield request.param, server.url


def _followed(report: LaunchReport, limits: TokenLimits) -> TokenLimits:
    return TokenLimits(
        max_tokens=report.advice.get("max_tokens", limits.max_tokens),
        max_context=report.advice.get("max_context", limits.max_context),
    )


def test_following_the_advice_passes_and_a_policy_saying_the_oracles_actions_wins(
    served: tuple[str, str], tokenizer: Any
) -> None:
    env, url = served
    asked = TokenLimits(max_tokens=ISSUE_RUNS[env], max_context=TRL_MAX_CONTEXT)
    report = check_launch(env, tokenizer, asked, urls=[url])
    assert report.problems == [] or set(report.advice) == {f.key for f in report.problems}
    followed = _followed(report, asked)
    horizon = report.advice.get("horizon", get_plugin_host().env(env).default_max_turns)
    again = check_launch(env, tokenizer, followed, urls=[url], max_turns=horizon)
    assert again.problems == [], again.refusal()
    for task_id in dict.fromkeys([report.prompt_task, report.episode_task]):
        assert task_id is not None
        played = _play(url, env, task_id, tokenizer, followed, horizon)
        assert played.outcome is Outcome.SUCCESS and played.reward > 0, (task_id, played.outcome, len(played.turns))
    if "max_context" in report.advice:
        # At the refused context the same policy cannot win the episode that needs the most context.
        assert _play(url, env, report.episode_task or 0, tokenizer, asked, horizon).outcome is Outcome.TRUNCATED
    if "max_tokens" in report.advice:
        # At the refused max_tokens it cannot say the longest of the oracle's actions, and does not win.
        assert _play(url, env, report.action_task or 0, tokenizer, asked, horizon).outcome is not Outcome.SUCCESS


def test_textcraft_is_refused_with_every_key_and_the_envs_a_tiny_model_learns(tokenizer: Any) -> None:
    """The issue's run: the split's longest prompt alone does not fit max_context=1024."""
    report = check_launch("textcraft", tokenizer, TokenLimits(max_tokens=29, max_context=TRL_MAX_CONTEXT))
    assert report.prompts_measured == 444  # the whole train split, not its first 8 tasks
    assert report.prompt_tokens is not None and report.prompt_tokens > TRL_MAX_CONTEXT
    # The issue's advice, max_tokens=29, came from the split's first 8 tasks: longer actions come later.
    assert [f.key for f in report.problems] == ["max_tokens", "max_context"] and list(report.advice) == [
        "max_tokens",
        "max_context",
    ]
    assert report.advice["max_tokens"] > 29
    problem = report.problems[1]
    assert "end before their first turn" in problem.message
    assert f"Set max_context>={report.advice['max_context']}" in problem.message
    refusal = report.refusal()
    together = f"max_tokens={report.advice['max_tokens']} max_context={report.advice['max_context']}"
    assert f"Settings with which the oracle's measured episodes fit: {together}." in refusal
    # Said from the installed envs' specs (EnvSpec.cpu_recipe), not from a list in core.
    assert "What a model trained from scratch learns on a CPU, as measured: " in refusal
    assert f"trail: {get_plugin_host().env('trail').cpu_recipe}" in refusal
    assert f"maze: {get_plugin_host().env('maze').cpu_recipe}" in refusal
    assert "textcraft:" not in refusal


def test_a_horizon_shorter_than_the_oracles_episodes_is_refused_with_the_turns_it_needs(tokenizer: Any) -> None:
    """maze at the issue's settings and a 3-turn horizon: every key that must change is refused at once."""
    report = check_launch("maze", tokenizer, TokenLimits(max_tokens=7, max_context=TRL_MAX_CONTEXT), max_turns=3)
    assert [f.key for f in report.problems] == ["max_tokens", "max_context", "horizon"] == list(report.advice)
    assert report.oracle_turns is not None and report.advice["horizon"] >= report.oracle_turns > 3
    [horizon] = [f for f in report.problems if f.key == "horizon"]
    assert f"Set horizon={report.advice['horizon']} or more" in horizon.message


def test_the_tiny_model_sampled_at_textcrafts_advice_plays_where_the_refused_context_gave_no_turn(
    tiny_model: Path, tokenizer: Any
) -> None:
    """The issue's zero-turn episodes: the model itself, sampled, on the task with the split's longest prompt."""
    asked = TokenLimits(max_tokens=29, max_context=TRL_MAX_CONTEXT)
    sampler = ModelSampler(tiny_model)

    def generate(prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        sample = sampler.sample(prompt_ids, sampling.max_tokens)
        return Generation(sample.token_ids, sample.logprobs, sample.finish_reason)

    async def episode(url: str, task_id: TaskId | None, limits: TokenLimits) -> Trajectory:
        policy = TokenPolicy(
            generate, tokenizer, SamplingParams(max_tokens=limits.max_tokens), max_context=limits.max_context or 0
        )
        task = Task(env="textcraft", task_id=task_id, split="train", max_turns=2)
        async with EnvClient(url) as client:
            return await play_episode(client, policy, task)

    with LocalServer("textcraft") as server:
        report = check_launch("textcraft", tokenizer, asked, urls=[server.url])
        refused = asyncio.run(episode(server.url, report.prompt_task, asked))
        followed = asyncio.run(episode(server.url, report.prompt_task, _followed(report, asked)))
    assert refused.outcome is Outcome.TRUNCATED and refused.turns == []
    assert len(followed.turns) == 2 and all(isinstance(t.reward, float) for t in followed.turns)
    assert followed.tokens is not None and len(followed.tokens) <= report.advice["max_context"]
