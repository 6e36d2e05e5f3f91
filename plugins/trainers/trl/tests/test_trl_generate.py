"""Token-in/token-out generation from the live model, and the rollout answer TRL receives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import torch
from agenthub import Outcome, Task, TokenTrace, Trajectory
from agenthub.rollout import Generation, SamplingParams
from agenthub.testing import build_tiny_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from agenthub_trainer_trl.generate import (
    ModelGenerator,
    NonFiniteScoresError,
    cut_at_stop,
    reject_non_finite_scores,
    sampled_logprobs,
)
from agenthub_trainer_trl.rollout import rollout_batch


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    path = build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=1)
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


class CountingGenerator(ModelGenerator):
    """The real generator, counting the batches it samples."""

    batches: list[int]

    def sample(self, requests: list[Any]) -> list[Generation]:
        self.batches.append(len(requests))
        return super().sample(requests)


def test_concurrent_requests_are_sampled_in_one_batch_with_the_models_own_logprobs(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    generator = CountingGenerator(
        lambda: model, pad_token_id=tokenizer.pad_token_id, stop_token_ids=[tokenizer.eos_token_id]
    )
    generator.batches = []
    prompts = [tokenizer.encode(text) for text in ("guess 3", "Too high. Too low.", "craft get inventory go north")]
    sampling = [SamplingParams(max_tokens=n) for n in (5, 3, 6)]

    async def ask_all() -> list[Generation]:
        return list(await asyncio.gather(*(generator(p, s) for p, s in zip(prompts, sampling, strict=True))))

    results = asyncio.run(ask_all())
    assert generator.batches == [3]  # left-padded into one batch
    for prompt, params, result in zip(prompts, sampling, results, strict=True):
        if result.finish_reason == "length":
            assert len(result.token_ids) == params.max_tokens
        else:
            assert result.token_ids[-1] == tokenizer.eos_token_id and len(result.token_ids) <= params.max_tokens
        # Each logprob is the model's own, recomputed on the unpadded sequence: sampling was faithful.
        with torch.no_grad():
            logits = model(torch.tensor([prompt + result.token_ids])).logits[0, len(prompt) - 1 : -1]
        expected = torch.log_softmax(logits, -1).gather(-1, torch.tensor(result.token_ids).unsqueeze(-1)).squeeze(-1)
        assert result.logprobs == pytest.approx(expected.tolist(), abs=1e-4)
    assert model.training is False  # left as it was found


def test_a_turn_ends_at_its_first_stop_token() -> None:
    assert cut_at_stop([5, 6, 2, 7], [-1.0, -2.0, -3.0, -4.0], {2}, limit=8) == Generation(
        [5, 6, 2], [-1, -2, -3], "stop"
    )
    assert cut_at_stop([5, 6, 7], None, {2}, limit=2) == Generation([5, 6], None, "length")


def test_vllm_logprobs_are_taken_for_the_sampled_token() -> None:
    # vLLM's shape: per position, candidate logprobs and their token ids; the sampled token may not be first.
    assert sampled_logprobs([7, 9], [[-0.5, -0.1], [-0.2]], [[3, 7], [9]]) == [-0.1, -0.2]
    assert sampled_logprobs([7], [[None]], [[7]]) is None  # a missing value: the turn keeps no logprobs
    assert sampled_logprobs([7], None, None) is None


def test_the_rollout_answer_masks_env_tokens_and_never_trains_on_infra_failures() -> None:
    trace = TokenTrace(
        prompt_ids=[1, 2],
        response_ids=[10, 11, 3, 4, 12],
        response_mask=[1, 1, 0, 0, 1],
        logprobs=[-0.1, -0.2, 0.0, 0.0, -0.3],
    )
    task = Task(env="trail", task_id=1, max_turns=3)
    won = Trajectory(task=task, first_observation="", outcome=Outcome.SUCCESS, reward=1.0, tokens=trace)
    broken = won.model_copy(update={"outcome": Outcome.ENV_ERROR, "reward": 0.0})
    empty = Trajectory(task=task, first_observation="", outcome=Outcome.ENV_ERROR)
    batch = rollout_batch([won, broken, empty], pad_token_id=0)
    assert batch["prompt_ids"] == [[1, 2], [1, 2], [0]]
    assert batch["completion_ids"] == [[10, 11, 3, 4, 12], [10, 11, 3, 4, 12], [0]]
    assert batch["env_mask"] == [[1, 1, 0, 0, 1], [0, 0, 0, 0, 0], [0]]
    assert batch["env_reward"] == [1.0, None, None] and batch["success"] == [1.0, None, None]
    assert batch["logprobs"][0] == [-0.1, -0.2, 0.0, 0.0, -0.3] and batch["max_turns"] == [3, 3, 3]


def test_scores_that_cannot_be_sampled_stop_generation_with_the_cause_and_the_cure(tmp_path: Any) -> None:
    path = build_tiny_model(tmp_path / "model", seed=2)
    model, tokenizer = AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)
    with torch.no_grad():  # as weights overflowed by a bf16 step would be
        model.get_output_embeddings().weight.fill_(float("nan"))
    generator = ModelGenerator(
        lambda: model, pad_token_id=tokenizer.pad_token_id, stop_token_ids=[tokenizer.eos_token_id]
    )
    with pytest.raises(NonFiniteScoresError, match=r"trl\.bf16=false"):
        asyncio.run(generator(tokenizer.encode("guess 3"), SamplingParams(max_tokens=3)))


def test_tokens_ruled_out_by_top_p_are_not_taken_for_overflow(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    generator = ModelGenerator(
        lambda: model, pad_token_id=tokenizer.pad_token_id, stop_token_ids=[tokenizer.eos_token_id]
    )
    result = asyncio.run(generator(tokenizer.encode("guess 3"), SamplingParams(max_tokens=4, top_p=0.3)))
    assert 1 <= len(result.token_ids) <= 4
    assert all(lp <= 0.0 for lp in result.logprobs)


def test_the_overflow_check_rejects_rows_with_no_token_left() -> None:
    scores = torch.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")]])
    with pytest.raises(NonFiniteScoresError, match="1 of 2 batch rows"):
        reject_non_finite_scores(None, scores)
    assert reject_non_finite_scores(None, scores[:1]) is not None
