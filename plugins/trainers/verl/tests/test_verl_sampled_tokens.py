"""Token by token: what verl trains on is exactly what its engine sampled, turn after turn.

verl's ``AgentLoopWorker.generate_sequences`` (the call the trainer makes each step) runs
``AgenthubAgentLoop`` against a real ``trail`` server, and its engine is
:class:`~.conftest.SamplingEngine`: verl's server-manager interface over a real tiny model's
samples, which are mostly not the tokenizer's encoding of their own text. Every batch row
verl hands the trainer (prompts, responses, response_mask, rollout_log_probs, unpadded by
the attention mask) must hold every sampled turn exactly, right after the prompt it was
sampled from (``check_sampled_turns``); a policy patched to decode and re-encode its turns
(the review's patch) must fail that check.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from agenthub import LocalServer
from agenthub.rollout import Generation, SamplingParams, inject_generation_fault
from agenthub.testing import CheckTally, EngineAnswer, ModelSampler, SequenceView, build_tiny_model, check_sampled_turns
from verl import DataProto
from verl.utils.dataset.rl_dataset import collate_fn

from agenthub_trainer_verl.pools import close_pools

from .conftest import SamplingEngine, make_worker

MAX_TOKENS = 10  # short turns: many of them per episode, and the module stays quick
STEPS = 2  # verl steps (batches) played: 4 tasks x rollout.n=2 episodes each


@pytest.fixture(scope="module", params=["chatml", "qwen3"])
def model_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with a ChatML template, or Qwen3's (which drops past turns' thinking)."""
    return build_tiny_model(tmp_path_factory.mktemp(f"tiny-{request.param}"), template=request.param)


@pytest.fixture(scope="module")
def trail_server_url() -> Iterator[str]:
    with LocalServer("trail") as server:
        yield server.url


def engine_for(model_dir: Path, seed: int = 1) -> SamplingEngine:
    # Stops at the model's eos, <|im_end|>, as vLLM would; samples on one torch thread (ModelSampler's
    # default), as a tiny model's forward passes are many times slower on more of a busy machine's cores.
    sampler = ModelSampler(model_dir, seed=seed, threads=1)
    return SamplingEngine(sampler)


def play(tmp_path: Path, model_dir: Path, url: str, engine: SamplingEngine) -> list[DataProto]:
    """``STEPS`` of verl's rollout: each a batch of the parquet's rows, repeated ``rollout.n`` times as
    ``RayPPOTrainer.fit`` does, through ``AgentLoopWorker.generate_sequences``."""
    worker, dataset = make_worker(tmp_path, model_dir, url, engine, max_tokens=MAX_TOKENS)
    rollout_n = int(worker.config.actor_rollout_ref.rollout.n)

    async def steps() -> list[DataProto]:
        outputs = []
        try:
            for step in range(1, STEPS + 1):
                batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
                batch.non_tensor_batch["uid"] = np.array([str(uuid.uuid4()) for _ in range(len(batch))], dtype=object)
                batch.meta_info["global_steps"] = step
                outputs.append(await worker.generate_sequences(batch.repeat(repeat_times=rollout_n, interleave=True)))
        finally:
            await close_pools()
        return outputs

    return asyncio.run(steps())


def views(outputs: list[DataProto]) -> list[SequenceView]:
    """Each row the trainer receives, without verl's padding (left on prompts, right on responses)."""
    out = []
    for step, output in enumerate(outputs, start=1):
        batch = output.batch
        width = batch["prompts"].shape[1]
        for row in range(batch["prompts"].shape[0]):
            attention = batch["attention_mask"][row]
            keep = attention[width:] == 1
            out.append(
                SequenceView(
                    prompt_ids=batch["prompts"][row][attention[:width] == 1].tolist(),
                    response_ids=batch["responses"][row][keep].tolist(),
                    response_mask=batch["response_mask"][row][keep].tolist(),
                    logprobs=batch["rollout_log_probs"][row][keep].tolist(),
                    name=f"step {step} row {row}",
                )
            )
    return out


def answers(engine: SamplingEngine) -> list[EngineAnswer]:
    return [EngineAnswer(c["prompt_ids"], c["token_ids"], c["logprobs"]) for c in engine.calls]


def test_verl_trains_on_the_engines_samples_token_by_token(
    tmp_path: Path, model_dir: Path, trail_server_url: str
) -> None:
    engine = engine_for(model_dir)
    outputs = play(tmp_path, model_dir, trail_server_url, engine)
    sequences = views(outputs)

    tally: CheckTally = check_sampled_turns(sequences, answers(engine))
    assert tally.answers == len(engine.calls) and tally.cut_answers == 0  # nothing dropped or cut
    assert all(c["logprobs"] is not None for c in engine.calls)  # so the check compared every logprob
    assert tally.sequences == len(sequences) == STEPS * 8
    assert tally.multi_turn_sequences >= 4, tally
    # The samples are the model's, not the tokenizer's: these would change if re-encoded.
    non_canonical = len(engine.sampler.non_canonical())
    assert non_canonical >= 5, f"{non_canonical} of {len(engine.calls)} turns are not canonical"
    # Turns end on the stop token and at max_tokens; verl's engine reports both as "completed".
    assert {c["finish"] for c in engine.calls} == {"stop", "length"}
    assert all(c["sampling"]["max_tokens"] <= MAX_TOKENS for c in engine.calls)
    # One request id per episode (prefix-cache stickiness), every turn of an episode under it.
    assert len({c["request_id"] for c in engine.calls}) == len(sequences)


def test_a_policy_that_re_encodes_its_turns_is_caught(tmp_path: Path, model_dir: Path, trail_server_url: str) -> None:
    """The review's patch: each sampled turn decoded and encoded again before it enters the trace."""
    engine = engine_for(model_dir)
    tokenizer = engine.sampler.tokenizer

    def re_encoding(generation: Generation, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        ids = list(tokenizer.encode(tokenizer.decode(generation.token_ids), add_special_tokens=False))
        logprobs = ((generation.logprobs or []) + [0.0] * len(ids))[: len(ids)]
        return Generation(ids[: sampling.max_tokens], logprobs[: sampling.max_tokens], generation.finish_reason)

    with inject_generation_fault(re_encoding):
        outputs = play(tmp_path, model_dir, trail_server_url, engine)
    assert len(engine.sampler.non_canonical()) >= 3  # else there would be nothing for the check to catch
    with pytest.raises(AssertionError, match="re-encoded"):
        check_sampled_turns(views(outputs), answers(engine))
