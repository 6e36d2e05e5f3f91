"""``inject_generation_fault``: the seam a trainer's tests use to corrupt every engine answer, in place of
patching the policy module; the policy still holds the corrupted answer to its contract."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agenthub import LocalServer, Outcome, Task, Trajectory
from agenthub.rollout import (
    EnvPool,
    Executor,
    Generation,
    SamplingParams,
    TokenPolicy,
    episode_requests,
    inject_generation_fault,
)
from agenthub.testing.tiny_tokenizer import build_tokenizer

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def guess_url() -> Iterator[str]:
    with LocalServer("guess") as server:
        yield server.url


async def play(url: str, policy: TokenPolicy) -> Trajectory:
    async with EnvPool.from_urls([url]) as pool:
        [trajectory] = await Executor(pool, policy, concurrency=1).run(episode_requests([Task(env="guess", task_id=3)]))
    return trajectory


def guessing(tokenizer: Any, text: str) -> Any:
    def generate(prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        ids = tokenizer.encode(text, add_special_tokens=False)[: sampling.max_tokens]
        return Generation(ids, [-0.5] * len(ids), "stop")

    return generate


async def test_a_fault_rewrites_every_answer_inside_its_block_only(guess_url: str) -> None:
    tokenizer = build_tokenizer("chatml")
    policy = TokenPolicy(guessing(tokenizer, "guess 5"), tokenizer, SamplingParams(max_tokens=8))
    seen: list[tuple[list[int], int]] = []

    def guess_one(generation: Generation, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        seen.append((prompt_ids, sampling.max_tokens))
        ids = tokenizer.encode("guess 1", add_special_tokens=False)
        return Generation(ids, None, generation.finish_reason)

    with inject_generation_fault(guess_one):
        faulted = await play(guess_url, policy)
    clean = await play(guess_url, policy)

    assert faulted.tokens is not None and clean.tokens is not None
    assert [t.action for t in faulted.turns] == ["guess 1"] * len(faulted.turns)
    assert {t.action for t in clean.turns} == {"guess 5"}  # the fault is gone after its block
    assert len(seen) == len(faulted.turns) and all(prompt and budget == 8 for prompt, budget in seen)
    one = tokenizer.encode("guess 1", add_special_tokens=False)
    assert all(t.token_ids == one and t.logprobs is None for t in faulted.turns)  # the trace holds what the fault made


async def test_a_faulted_answer_is_still_held_to_max_tokens(guess_url: str) -> None:
    tokenizer = build_tokenizer("chatml")
    policy = TokenPolicy(guessing(tokenizer, "guess 5"), tokenizer, SamplingParams(max_tokens=4))

    def chatty(generation: Generation, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        ids = tokenizer.encode("guess 8 " * 20, add_special_tokens=False)
        return Generation(ids, None, "length")

    with inject_generation_fault(chatty):
        trajectory = await play(guess_url, policy)
    assert trajectory.outcome is Outcome.AGENT_ERROR and not trajectory.trainable
    assert trajectory.error is not None and "more than max_tokens=4" in trajectory.error
