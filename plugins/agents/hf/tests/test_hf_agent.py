"""Agent ``hf`` through the hub executor against a real ``guess`` server: faithful tokens and logprobs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agenthub import ConfigError, Outcome, Task, Trajectory, get_plugin_host
from agenthub.rollout import EnvPool, Executor, Generation, SamplingParams, TokenPolicy, call_generate, episode_requests

from agenthub_agent_hf import HFPolicy

pytestmark = pytest.mark.anyio
TOLERANCE = 1e-4
TASKS = [Task(env="guess", task_id=t) for t in (3, 5, 8, 13)]


def make_agent(model_dir: Path, **settings: Any) -> HFPolicy:
    agent = get_plugin_host().agent("hf").make(model=str(model_dir), device="cpu", **settings)
    assert isinstance(agent, HFPolicy)
    return agent


class Recorder:
    """Wraps the policy's generate hook: every prompt the model saw and what it returned."""

    def __init__(self, policy: TokenPolicy) -> None:
        self.inner = policy.generate
        self.calls: list[tuple[list[int], Generation]] = []
        policy.generate = self

    async def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        generation = await call_generate(self.inner, prompt_ids, sampling)
        self.calls.append((list(prompt_ids), generation))
        return generation


async def play(url: str, agent: TokenPolicy, tasks: list[Task], concurrency: int = 4) -> list[Trajectory]:
    async with EnvPool.from_urls([url]) as pool:
        trajectories = await Executor(pool, agent, concurrency=concurrency).run(episode_requests(tasks))
    return sorted(trajectories, key=lambda t: t.key or "")


def model_turns(trajectory: Trajectory) -> list[tuple[int, int]]:
    """``(start, end)`` in prompt+response coordinates of each run of mask-1 tokens."""
    assert trajectory.tokens is not None
    offset, runs, start = len(trajectory.tokens.prompt_ids), [], None
    for index, mask in enumerate([*trajectory.tokens.response_mask, 0]):
        if mask and start is None:
            start = index
        elif not mask and start is not None:
            runs.append((offset + start, offset + index))
            start = None
    return runs


async def test_episodes_carry_exactly_the_sampled_tokens_and_the_models_logprobs(
    model_dir: Path, guess_url: str, score: Callable[[list[int]], list[float]]
) -> None:
    agent = make_agent(model_dir, temperature=1.0, max_tokens=12, seed=0, system_prompt="Play.", batch_wait_ms=20)
    recorder = Recorder(agent)
    trajectories = await play(guess_url, agent, TASKS)
    assert len(trajectories) == len(TASKS)
    for trajectory in trajectories:
        assert trajectory.outcome in (Outcome.TRUNCATED, Outcome.FAILURE, Outcome.SUCCESS), trajectory.error
        trace = trajectory.tokens
        assert trace is not None and trajectory.turns
        full = trace.prompt_ids + trace.response_ids
        turns = model_turns(trajectory)
        assert len(turns) == len(trajectory.turns)
        for start, end in turns:
            # The model's tokens are what generate() returned for exactly this context, nothing re-encoded.
            [generation] = [
                g for prompt, g in recorder.calls if prompt == full[:start] and g.token_ids == full[start:end]
            ]
            assert len(generation.token_ids) <= 12
            stored = trace.logprobs[start - len(trace.prompt_ids) : end - len(trace.prompt_ids)]
            assert stored == generation.logprobs
        # The stored logprobs are the model's own: a fresh forward pass over the whole episode agrees.
        fresh = score(full)
        for start, end in turns:
            for position in range(start, end):
                kept = trace.logprobs[position - len(trace.prompt_ids)]
                assert abs(fresh[position] - kept) < TOLERANCE, (position, fresh[position], kept)
        assert all(x == 0.0 for x, m in zip(trace.logprobs, trace.response_mask, strict=True) if not m)
        assert trajectory.provenance["policy"] == "hf" and trajectory.provenance["model"] == str(model_dir)
        assert trajectory.provenance["sampling"]["max_tokens"] == 12
    assert sum(len(model_turns(t)) for t in trajectories) == len(recorder.calls)
    assert agent.generator.stats.max_batch_size > 1, agent.generator.stats


async def test_greedy_episodes_are_the_same_batched_and_unbatched(model_dir: Path, numbered_guess_url: str) -> None:
    batched = make_agent(model_dir, temperature=0, max_tokens=10, max_batch=4, batch_wait_ms=20)
    alone = make_agent(model_dir, temperature=0, max_tokens=10, max_batch=1)
    together = await play(numbered_guess_url, batched, TASKS)
    apart = await play(numbered_guess_url, alone, TASKS)
    assert batched.generator.stats.max_batch_size > 1
    assert alone.generator.stats.max_batch_size == 1
    # Every episode has its own context (prompts of different lengths share the batches) ...
    assert len({tuple(t.tokens.response_ids) for t in together if t.tokens is not None}) == len(TASKS)
    # ... and batching changes nothing: the same ids, the same logprobs.
    for a, b in zip(together, apart, strict=True):
        assert a.tokens is not None and b.tokens is not None
        assert a.tokens.response_ids == b.tokens.response_ids
        assert a.tokens.logprobs == pytest.approx(b.tokens.logprobs, abs=TOLERANCE)


async def test_max_tokens_and_max_context_are_respected(model_dir: Path, guess_url: str) -> None:
    agent = make_agent(model_dir, temperature=1.0, max_tokens=7, seed=1, system_prompt="Play.")
    first = (await play(guess_url, agent, TASKS[:1]))[0].first_observation
    limit = len(agent.deltas_for("Play.").prompt(first)) + 60  # room for about three turns
    agent = make_agent(model_dir, temperature=1.0, max_tokens=7, max_context=limit, seed=1, system_prompt="Play.")
    recorder = Recorder(agent)
    trajectories = await play(guess_url, agent, TASKS)
    assert all(len(g.token_ids) <= 7 for _, g in recorder.calls)
    assert any(g.finish_reason == "length" and len(g.token_ids) == 7 for _, g in recorder.calls)
    for trajectory in trajectories:
        assert trajectory.tokens is not None and trajectory.error is None
        assert len(trajectory.tokens) <= limit
        assert trajectory.outcome is Outcome.TRUNCATED and 1 <= len(trajectory.turns) < 8


def test_the_plugin_registers_agent_hf() -> None:
    spec = get_plugin_host().agent("hf")
    assert spec.factory == "agenthub_agent_hf.agent:hf_agent"
    assert "transformers" in spec.description


def test_a_bad_model_path_says_what_to_do(tmp_path: Path) -> None:
    spec = get_plugin_host().agent("hf")
    with pytest.raises(ConfigError, match=r"model path '.*nowhere' does not exist.*build_tiny_model") as info:
        spec.make(model=str(tmp_path / "nowhere"))
    assert "never downloaded" in str(info.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"has no config\.json, so it is not a model"):
        spec.make(model=str(tmp_path / "empty"))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text('{"model_type": "qwen2"}')
    with pytest.raises(ConfigError, match="cannot load a causal LM and tokenizer from"):
        spec.make(model=str(tmp_path / "broken"))


def test_bad_settings_are_named(model_dir: Path) -> None:
    spec = get_plugin_host().agent("hf")
    with pytest.raises(
        ConfigError, match=r"temprature\n.*Extra inputs are not permitted(.|\n)*settings: model, device"
    ):
        spec.make(model=str(model_dir), temprature=0.5)
    with pytest.raises(ConfigError, match="max_context=9000 is more than the model's max_position_embeddings=4096"):
        spec.make(model=str(model_dir), device="cpu", max_context=9000)
    with pytest.raises(ConfigError, match="unknown device 'tpu'"):
        spec.make(model=str(model_dir), device="tpu")
