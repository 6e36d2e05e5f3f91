"""The sampling engine double and the token-by-token check every adapter's tests use.

``TokenPolicy`` (the executor's token-level policy, which every trainer adapter builds
on) over ``ModelSampler``: the traces hold the model's samples exactly, and a policy
patched to decode and re-encode each turn (the review's patch) is caught.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenthub import LocalServer, Task, Trajectory
from agenthub.rollout.executor import Executor, episode_requests
from agenthub.rollout.policy import Generation, SamplingParams, TokenPolicy
from agenthub.rollout.pool import EnvPool
from agenthub.testing.model_sampler import ModelSampler, is_canonical
from agenthub.testing.tiny_model import build_tiny_model
from agenthub.testing.token_checks import EngineAnswer, SequenceView, check_sampled_turns

pytestmark = pytest.mark.anyio
TASKS = [Task(env="trail", task_id=10_000 + i) for i in range(6)]


@pytest.fixture(scope="module")
def trail_url() -> Iterator[str]:
    with LocalServer("trail") as server:
        yield server.url


@pytest.fixture(scope="module", params=["chatml", "qwen3"])
def model_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp(f"tiny-{request.param}"), template=request.param)


def answers(sampler: ModelSampler) -> list[EngineAnswer]:
    return [EngineAnswer(s.prompt_ids, s.token_ids, s.logprobs) for s in sampler.samples]


def views(trajectories: list[Trajectory]) -> list[SequenceView]:
    out = []
    for trajectory in trajectories:
        trace = trajectory.tokens
        assert trace is not None, trajectory.key
        out.append(
            SequenceView(trace.prompt_ids, trace.response_ids, trace.response_mask, trace.logprobs, trajectory.key)
        )
    return out


async def play(url: str, sampler: ModelSampler) -> list[Trajectory]:
    def generate(prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        sample = sampler.sample(prompt_ids, sampling.max_tokens, temperature=sampling.temperature)
        return Generation(sample.token_ids, sample.logprobs, sample.finish_reason)

    policy = TokenPolicy(generate, sampler.tokenizer, SamplingParams(temperature=1.0, max_tokens=12), max_context=2048)
    async with EnvPool.from_urls([url]) as pool:
        return await Executor(pool, policy, concurrency=3).run(episode_requests(TASKS, samples=2))


async def test_the_traces_hold_the_models_samples_token_by_token(model_dir: Path, trail_url: str) -> None:
    sampler = ModelSampler(model_dir, seed=1)
    trajectories = await play(trail_url, sampler)
    tally = check_sampled_turns(views(trajectories), answers(sampler))
    assert tally.answers == len(sampler.samples) >= len(trajectories)
    assert tally.multi_turn_sequences >= 2, tally
    # The samples are the model's, not the tokenizer's: many would change if re-encoded.
    assert len(sampler.non_canonical()) >= 3, f"{len(sampler.non_canonical())} of {len(sampler.samples)}"
    # stop_bias lets turns end on their own as well as at max_tokens.
    assert {s.finish_reason for s in sampler.samples} == {"stop", "length"}


async def test_a_policy_that_re_encodes_its_turns_is_caught(
    model_dir: Path, trail_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's patch: decode each sampled turn and encode it again before it enters the trace."""
    import agenthub.rollout.policy as policy_module

    sampler = ModelSampler(model_dir, seed=1)
    honest = policy_module.call_generate

    async def re_encoding(generate: Any, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        generation = await honest(generate, prompt_ids, sampling)
        tokenizer = sampler.tokenizer
        ids = list(tokenizer.encode(tokenizer.decode(generation.token_ids), add_special_tokens=False))
        logprobs = ((generation.logprobs or []) + [0.0] * len(ids))[: len(ids)]
        return Generation(ids[: sampling.max_tokens], logprobs[: sampling.max_tokens], generation.finish_reason)

    monkeypatch.setattr(policy_module, "call_generate", re_encoding)
    trajectories = await play(trail_url, sampler)
    with pytest.raises(AssertionError, match="re-encoded"):
        check_sampled_turns(views(trajectories), answers(sampler))


def test_sampling_is_seeded_and_bounded(tmp_path: Path) -> None:
    path = build_tiny_model(tmp_path / "tiny")
    first, second = ModelSampler(path, seed=3), ModelSampler(path, seed=3)
    prompt = first.tokenizer.encode("hello there", add_special_tokens=False)
    a = [first.sample(prompt, 6) for _ in range(3)]
    b = [second.sample(prompt, 6) for _ in range(3)]
    assert [s.token_ids for s in a] == [s.token_ids for s in b]
    assert all(1 <= len(s.token_ids) <= 6 and len(s.logprobs) == len(s.token_ids) for s in a)
    assert all(s.finish_reason == "stop" or len(s.token_ids) == 6 for s in a)
    assert all(lp <= 0 for s in a for lp in s.logprobs)
    # A request's own stop ids and min_tokens, as an engine honours them.
    other = first.tokenizer.convert_tokens_to_ids("<|im_start|>")
    strict = first.sample(prompt, 6, stop_token_ids=[other], min_tokens=6)
    assert strict.stop_token_ids == (other,) and len(strict.token_ids) == 6 and other not in strict.token_ids
    with pytest.raises(ValueError, match="max_tokens must be >= 1"):
        first.sample(prompt, 0)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        first.sample(prompt, 4, temperature=0)


def test_the_check_names_a_masked_run_no_answer_explains() -> None:
    view = SequenceView([1, 2], [5, 6, 0, 7], [1, 1, 0, 1], None, "episode-0")
    with pytest.raises(AssertionError, match="episode-0: masked ids \\[7\\]\\.\\.\\. at offset 3 are no answer"):
        check_sampled_turns([view], [EngineAnswer([1, 2], [5, 6])])
    assert check_sampled_turns([view], [EngineAnswer([1, 2], [5, 6]), EngineAnswer([1, 2, 5, 6, 0], [7])]).answers == 2


def test_is_canonical_ignores_a_trailing_stop_token(tmp_path: Path) -> None:
    sampler = ModelSampler(build_tiny_model(tmp_path / "tiny"))
    tokenizer = sampler.tokenizer
    ids = tokenizer.encode("go left", add_special_tokens=False)
    assert is_canonical(tokenizer, [*ids, tokenizer.eos_token_id], [tokenizer.eos_token_id])
    single = [tokenizer.convert_tokens_to_ids(c) for c in "go"]  # one token a letter: not how BPE writes it
    if single != tokenizer.encode("go", add_special_tokens=False):
        assert not is_canonical(tokenizer, single)
