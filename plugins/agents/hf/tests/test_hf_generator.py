"""``HFGenerator``: exact sampled ids, logprobs of the model's distribution, stop/length, batching, seeds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
import torch
from agenthub.rollout import Generation, GenerationError, SamplingParams, render

from agenthub_agent_hf import HFGenerator, LoadedModel

pytestmark = pytest.mark.anyio
TOLERANCE = 1e-4
TEXTS = [
    "I am thinking of a whole number from 1 to 16. Reply with: guess <number>",
    "hi",
    "Too high. Turns left: 3. craft the red key and open the door",
    "guess 8",
]


def generator(loaded: LoadedModel, **kwargs: Any) -> HFGenerator:
    settings: dict[str, Any] = {
        "stop_token_ids": [loaded.tokenizer.eos_token_id],
        "pad_token_id": loaded.tokenizer.pad_token_id,
        "max_positions": loaded.max_positions,
        **kwargs,
    }
    return HFGenerator(loaded.model, **settings)


@pytest.fixture(scope="module")
def prompts(tokenizer: Any) -> list[list[int]]:
    return [render(tokenizer, [{"role": "user", "content": t}], add_generation_prompt=True) for t in TEXTS]


def assert_logprobs_are_the_models(
    score: Callable[[list[int]], list[float]], prompt: list[int], generation: Generation
) -> None:
    assert generation.logprobs is not None and len(generation.logprobs) == len(generation.token_ids)
    fresh = score(prompt + generation.token_ids)[len(prompt) :]
    worst = max(abs(a - b) for a, b in zip(fresh, generation.logprobs, strict=True))
    assert worst < TOLERANCE, f"logprobs differ from a fresh forward pass by {worst}"


def test_greedy_ids_are_the_same_batched_and_one_at_a_time(
    loaded: LoadedModel, prompts: list[list[int]], score: Callable[[list[int]], list[float]]
) -> None:
    engine = generator(loaded)
    greedy = SamplingParams(temperature=0, max_tokens=20)
    batched = engine.generate_batch(prompts, greedy)
    alone = [engine.generate_batch([p], greedy)[0] for p in prompts]
    assert [g.token_ids for g in batched] == [g.token_ids for g in alone]
    assert len({tuple(g.token_ids) for g in batched}) == len(prompts)  # not one degenerate answer
    for prompt, generation in zip(prompts, batched, strict=True):
        assert_logprobs_are_the_models(score, prompt, generation)
        # Greedy: each id is the argmax, so its logprob is the largest there is.
        assert all(-10 < x <= 0 for x in generation.logprobs or [])
    assert engine.stats.sizes == {len(prompts): 1, 1: len(prompts)}


def test_sampled_logprobs_are_of_the_raw_distribution_at_temperature_one(
    loaded: LoadedModel, prompts: list[list[int]], score: Callable[[list[int]], list[float]]
) -> None:
    engine = generator(loaded, seed=3)
    for generation, prompt in zip(
        engine.generate_batch(prompts, SamplingParams(temperature=0.7, top_p=0.8, max_tokens=16)), prompts, strict=True
    ):
        assert_logprobs_are_the_models(score, prompt, generation)


def test_processed_logprobs_are_of_the_distribution_sampled_from(loaded: LoadedModel, prompts: list[list[int]]) -> None:
    temperature, top_p = 0.5, 0.6
    engine = generator(loaded, seed=5, logprobs="processed")
    [generation] = engine.generate_batch(
        prompts[:1], SamplingParams(temperature=temperature, top_p=top_p, max_tokens=8)
    )
    ids = prompts[0] + generation.token_ids
    with torch.inference_mode():
        logits = loaded.model(torch.tensor([ids])).logits[0].float() / temperature
    for step, token in enumerate(generation.token_ids):
        row = logits[len(prompts[0]) + step - 1]
        probs = row.softmax(-1)
        ordered, order = probs.sort(descending=True)
        kept = order[(ordered.cumsum(-1) - ordered) <= top_p]
        assert token in kept.tolist()  # sampled inside the nucleus
        expected = torch.log_softmax(row[kept], -1)[kept.tolist().index(token)].item()
        assert generation.logprobs is not None
        assert abs(generation.logprobs[step] - expected) < TOLERANCE


def test_a_stop_token_ends_the_turn_and_is_kept(loaded: LoadedModel, prompts: list[list[int]]) -> None:
    greedy = SamplingParams(temperature=0, max_tokens=20)
    free = generator(loaded).generate_batch(prompts[:1], greedy)[0]
    stop = free.token_ids[3]
    cut = free.token_ids.index(stop) + 1
    [stopped] = generator(loaded, stop_token_ids=[stop]).generate_batch(prompts[:1], greedy)
    assert stopped.token_ids == free.token_ids[:cut]
    assert stopped.finish_reason == "stop"
    assert stopped.logprobs == pytest.approx(free.logprobs[:cut], abs=TOLERANCE)  # type: ignore[index]
    assert free.finish_reason == "length" and len(free.token_ids) == 20


def test_each_row_keeps_its_own_max_tokens(loaded: LoadedModel, prompts: list[list[int]]) -> None:
    engine = generator(loaded)
    greedy = SamplingParams(temperature=0, max_tokens=12)
    limits = [3, 12, 1, 7]
    rows = engine.generate_batch(prompts, greedy, limits)
    assert [len(r.token_ids) for r in rows] == limits
    assert all(r.finish_reason == "length" for r in rows)
    full = engine.generate_batch(prompts, greedy)
    for row, whole, limit in zip(rows, full, limits, strict=True):
        assert row.token_ids == whole.token_ids[:limit]


def test_a_seed_makes_sampling_reproducible_without_touching_the_callers_rng(
    loaded: LoadedModel, prompts: list[list[int]]
) -> None:
    sampling = SamplingParams(temperature=1.0, max_tokens=12)
    torch.manual_seed(99)
    expected_next = torch.rand(2)
    torch.manual_seed(99)
    first = [generator(loaded, seed=7).generate_batch(prompts, sampling) for _ in range(2)]
    assert torch.equal(torch.rand(2), expected_next)
    other = generator(loaded, seed=8).generate_batch(prompts, sampling)
    assert [g.token_ids for g in first[0]] == [g.token_ids for g in first[1]]
    assert [g.token_ids for g in first[0]] != [g.token_ids for g in other]
    # A second call of the same generator draws new numbers.
    engine = generator(loaded, seed=7)
    assert [g.token_ids for g in engine.generate_batch(prompts, sampling)] != [
        g.token_ids for g in engine.generate_batch(prompts, sampling)
    ]


async def test_concurrent_requests_are_batched_and_get_their_own_answers(
    loaded: LoadedModel, prompts: list[list[int]]
) -> None:
    engine = generator(loaded, max_batch=3, batch_wait_ms=50)
    greedy = SamplingParams(temperature=0, max_tokens=10)
    requests = prompts + prompts[:2]
    answers = await asyncio.gather(*(engine.generate(p, greedy) for p in requests))
    assert engine.stats.sizes == {3: 2}
    expected = generator(loaded).generate_batch(requests, greedy)
    assert [a.token_ids for a in answers] == [e.token_ids for e in expected]
    # Different sampling settings never share a call; each gets its own.
    engine = generator(loaded, max_batch=8, batch_wait_ms=50)
    mixed = await asyncio.gather(
        engine.generate(prompts[0], greedy),
        engine.generate(prompts[1], SamplingParams(temperature=1.0, max_tokens=4)),
        engine.generate(prompts[2], greedy.model_copy(update={"max_tokens": 2})),
    )
    assert engine.stats.sizes == {2: 1, 1: 1}
    assert [len(m.token_ids) for m in mixed] == [10, 4, 2]


async def test_a_cancelled_request_does_not_disturb_the_others(loaded: LoadedModel, prompts: list[list[int]]) -> None:
    engine = generator(loaded, max_batch=4, batch_wait_ms=100)
    greedy = SamplingParams(temperature=0, max_tokens=6)
    doomed = asyncio.ensure_future(engine.generate(prompts[0], greedy))
    kept = asyncio.ensure_future(engine.generate(prompts[1], greedy))
    await asyncio.sleep(0.01)
    doomed.cancel()
    assert len((await kept).token_ids) == 6
    assert doomed.cancelled()
    assert engine.stats.sizes == {1: 1}


async def test_requests_the_model_cannot_serve_are_refused_with_the_reason(
    loaded: LoadedModel, prompts: list[list[int]]
) -> None:
    engine = generator(loaded)
    sampling = SamplingParams(max_tokens=4)
    with pytest.raises(GenerationError, match="prompt_ids is empty"):
        await engine.generate([], sampling)
    with pytest.raises(GenerationError, match=r"token id 100000, outside the model's vocabulary \(0\.\.\d+\)"):
        await engine.generate([1, 100000], sampling)
    with pytest.raises(GenerationError, match="passes the model's max_position_embeddings=4096; lower max_context"):
        await engine.generate(prompts[0], SamplingParams(max_tokens=4096))
    with pytest.raises(GenerationError, match=r"does not implement sampling setting\(s\) min_p; it supports"):
        await engine.generate(prompts[0], SamplingParams(max_tokens=4, min_p=0.1))  # type: ignore[call-arg]
    with pytest.raises(GenerationError, match="top_k must be a whole number >= 0"):
        await engine.generate(prompts[0], SamplingParams(max_tokens=4, top_k=-1))  # type: ignore[call-arg]
    assert engine.stats.calls == 0
