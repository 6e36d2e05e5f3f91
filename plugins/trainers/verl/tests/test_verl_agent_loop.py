"""``AgenthubAgentLoop`` inside verl's real ``AgentLoopWorker``, against real env servers.

The worker is built from the config ``agenthub run trainer=verl`` writes
(composed by verl's hydra config), loads the agent-loop YAML, instantiates the
loop with hydra and pads its output, exactly as in training. Rows come from
the written parquet through verl's ``RLHFDataset``. Only the inference engine
is a stand-in (``TrailEngine``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import torch
from agenthub import LocalServer
from agenthub.training import StepOutcomeLog
from verl.experimental.agent_loop.agent_loop import get_trajectory_info

from agenthub_trainer_verl import agent_loop
from agenthub_trainer_verl.agent_loop import InfraFailureError
from agenthub_trainer_verl.pools import close_pools

from .conftest import TrailEngine, make_worker

SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}


async def run_sample(worker: Any, dataset: Any, index: int, *, meta_step: int = -1, **extra: Any) -> Any:
    """One sample through verl's ``_run_agent_loop`` (hydra instantiation, run, padding).

    ``meta_step``: the batch's ``meta_info["global_steps"]`` (the legacy trainer's only step), turned
    into ``_run_agent_loop``'s ``trajectory`` argument by verl's own ``get_trajectory_info``.
    """
    row = {k: v for k, v in dataset[index].items() if not isinstance(v, torch.Tensor)}
    [trajectory] = await get_trajectory_info(meta_step, [index], False)
    try:
        return await worker._run_agent_loop(dict(SAMPLING), trajectory, trace=False, **row, **extra)
    finally:
        await close_pools()


def unpadded(output: Any) -> tuple[list[int], list[int], list[int], list[float]]:
    """prompt, response, response_mask, rollout logprobs without verl's padding."""
    prompt_width = output.prompt_ids.shape[1]
    attention = output.attention_mask[0]
    prompt = output.prompt_ids[0][attention[:prompt_width] == 1].tolist()
    keep = attention[prompt_width:] == 1
    response = output.response_ids[0][keep].tolist()
    mask = output.response_mask[0][keep].tolist()
    logprobs = output.response_logprobs[0][keep].tolist()
    return prompt, response, mask, logprobs


def expected_from_calls(calls: list[dict[str, Any]]) -> tuple[list[int], list[int], list[int], list[float]]:
    """What verl must train on, rebuilt from what the engine saw and sampled, turn by turn."""
    response: list[int] = []
    mask: list[int] = []
    logprobs: list[float] = []
    for k, call in enumerate(calls):
        response += call["token_ids"]
        mask += [1] * len(call["token_ids"])
        logprobs += call["logprobs"]
        if k + 1 < len(calls):
            sent = call["prompt_ids"] + call["token_ids"]
            following = calls[k + 1]["prompt_ids"]
            assert following[: len(sent)] == sent, "a turn's prompt must extend the last one token for token"
            env_tokens = following[len(sent) :]
            response += env_tokens
            mask += [0] * len(env_tokens)
            logprobs += [0.0] * len(env_tokens)
    return calls[0]["prompt_ids"], response, mask, logprobs


def test_won_episode_is_verls_output_token_by_token(tmp_path: Path, tiny_model: Path, tokenizer: Any, trail_url: str):
    engine = TrailEngine(tokenizer)
    worker, dataset = make_worker(tmp_path, tiny_model, trail_url, engine)
    output = asyncio.run(run_sample(worker, dataset, 1))

    assert len(engine.calls) == 3  # trail has 3 forks: one model turn each
    assert len({c["request_id"] for c in engine.calls}) == 1  # one request id per episode: prefix-cache stickiness
    assert all(c["sampling"] == {**SAMPLING, "max_tokens": 256} for c in engine.calls)
    prompt, response, mask, logprobs = unpadded(output)
    want_prompt, want_response, want_mask, want_logprobs = expected_from_calls(engine.calls)
    assert prompt == want_prompt
    assert response[: len(want_response)] == want_response
    assert mask[: len(want_mask)] == want_mask
    assert logprobs[: len(want_logprobs)] == pytest.approx(want_logprobs)
    assert set(mask[len(want_mask) :]) <= {0}  # the template's close after the last turn is not trained
    # The env's answers sit between the model turns, in the model's chat template.
    text = tokenizer.decode(response)
    assert "Good. Fork 2 of 3" in text and "Good. Fork 3 of 3" in text
    assert "Follow the signs" in tokenizer.decode(prompt)  # the env's instructions are the system prompt
    assert output.reward_score == pytest.approx(1.0)
    assert output.num_turns == 6  # first observation, 3 model turns, 2 env turns between them
    assert output.extra_fields["agenthub_outcome"] == "success"
    assert output.extra_fields["turn_scores"] == pytest.approx([1 / 3] * 3)

    batch = worker._postprocess([output], input_non_tensor_batch=None)
    length = len(response)
    assert batch.batch["rm_scores"][0].nonzero().flatten().tolist() == [length - 1]  # on the last response token
    assert batch.batch["rm_scores"][0, length - 1].item() == pytest.approx(1.0)
    assert batch.batch["response_mask"][0].sum().item() == sum(want_mask)
    assert batch.batch["rollout_log_probs"].shape == batch.batch["responses"].shape


def test_an_episode_ends_at_response_length_and_earns_only_what_is_trained(
    tmp_path: Path, tiny_model: Path, tokenizer: Any, trail_url: str
):
    """verl trains on response_length tokens after the prompt: an episode must not earn reward past them."""
    whole = TrailEngine(tokenizer)
    worker, dataset = make_worker(tmp_path / "whole", tiny_model, trail_url, whole)
    assert asyncio.run(run_sample(worker, dataset, 1)).reward_score == pytest.approx(1.0)
    first, second = whole.calls[0], whole.calls[1]
    # response tokens through the second model turn and its close (one newline after <|im_end|>)
    through_second = len(second["prompt_ids"]) + len(second["token_ids"]) + 1 - len(first["prompt_ids"])

    engine = TrailEngine(tokenizer)
    worker, dataset = make_worker(tmp_path / "short", tiny_model, trail_url, engine, response_length=through_second + 1)
    output = asyncio.run(run_sample(worker, dataset, 1))
    assert len(engine.calls) == 2  # the third fork's observation would not fit: the episode ends there
    assert output.extra_fields["agenthub_outcome"] == "truncated"
    assert output.reward_score == pytest.approx(2 / 3)  # paid for the two forks it is trained on, not three
    _, response, mask, _ = unpadded(output)
    assert len(response) == through_second and sum(mask) == sum(len(c["token_ids"]) for c in engine.calls)


def test_lost_episode_is_trained_with_reward_zero(tmp_path: Path, tiny_model: Path, tokenizer: Any, trail_url: str):
    engine = TrailEngine(tokenizer, wrong=True)
    worker, dataset = make_worker(tmp_path, tiny_model, trail_url, engine)
    output = asyncio.run(run_sample(worker, dataset, 0))

    assert len(engine.calls) == 1  # a wrong turn ends the walk
    _, response, mask, logprobs = unpadded(output)
    assert response[: len(engine.calls[0]["token_ids"])] == engine.calls[0]["token_ids"]
    assert sum(mask) == len(engine.calls[0]["token_ids"])  # a policy failure is trained on
    assert logprobs[: len(mask)][: sum(mask)] == pytest.approx(engine.calls[0]["logprobs"])
    assert output.reward_score == 0.0
    assert output.extra_fields["agenthub_outcome"] == "failure"
    assert output.extra_fields["agenthub_trainable"] is True


def test_env_server_killed_mid_episode_is_not_trained(tmp_path: Path, tiny_model: Path, tokenizer: Any):
    with LocalServer("trail") as server:
        # The server dies as the model takes its second turn: that step fails, and so does the retry's session.
        engine = TrailEngine(tokenizer, on_call=lambda n: server.kill() if n == 1 else None)
        worker, dataset = make_worker(tmp_path, tiny_model, server.url, engine, max_attempts=2, unhealthy_wait_s=1)
        output = asyncio.run(run_sample(worker, dataset, 2))

    assert len(engine.calls) == 2  # the episode got going before the env died
    assert output.extra_fields["agenthub_outcome"] == "env_error"
    assert output.extra_fields["agenthub_trainable"] is False
    assert output.extra_fields["agenthub_attempts"] == 2
    assert output.response_mask.sum().item() == 0  # nothing of it is trained on
    assert output.reward_score == 0.0
    batch = worker._postprocess([output], input_non_tensor_batch=None)
    assert batch.batch["response_mask"].sum().item() == 0
    assert batch.batch["rm_scores"].sum().item() == 0.0


@pytest.mark.parametrize("on_infra_failure", ["mask", "raise"])
def test_env_server_down_from_the_start(tmp_path: Path, tiny_model: Path, tokenizer: Any, on_infra_failure: str):
    with LocalServer("trail") as server:
        engine = TrailEngine(tokenizer)
        settings = {"max_attempts": 1, "unhealthy_wait_s": 1, "on_infra_failure": on_infra_failure}
        worker, dataset = make_worker(tmp_path, tiny_model, server.url, engine, **settings)
        server.kill()
        if on_infra_failure == "raise":  # verl V1 marks the group of a sample that raises as failed (see README)
            with pytest.raises(Exception, match="ended in env_error") as failure:
                asyncio.run(run_sample(worker, dataset, 0))
            assert isinstance(failure.value, InfraFailureError)
        else:
            output = asyncio.run(run_sample(worker, dataset, 0))
            assert output.extra_fields["agenthub_outcome"] == "env_error"
            assert output.response_mask.sum().item() == 0
            assert output.attention_mask[0, output.prompt_ids.shape[1] :].sum().item() == 1  # one masked pad token
            assert output.reward_score == 0.0
    assert engine.calls == []


def test_horizon_follows_verls_training_step(
    tmp_path: Path, tiny_model: Path, tokenizer: Any, trail_url: str, monkeypatch: pytest.MonkeyPatch
):
    said: list[str] = []
    monkeypatch.setattr(agent_loop, "STEP_LOG", StepOutcomeLog(max_context_key="response_length", emit=said.append))
    engine = TrailEngine(tokenizer)
    horizon = {"kind": "stepwise", "rounds": [1, 3], "every": 2}
    worker, dataset = make_worker(tmp_path, tiny_model, trail_url, engine, horizon=horizon)

    early = asyncio.run(run_sample(worker, dataset, 0, global_steps=1))  # verl's steps count from 1
    assert early.extra_fields["agenthub_turns"] == 1
    assert early.extra_fields["agenthub_outcome"] == "truncated"
    assert early.response_mask.sum().item() > 0  # the turn limit is a normal end: trained on
    assert early.reward_score == pytest.approx(1 / 3)

    assert said == []  # step 1 may still have episodes to come
    late = asyncio.run(run_sample(worker, dataset, 0, global_steps=3))
    assert late.extra_fields["agenthub_turns"] == 3
    assert late.extra_fields["agenthub_outcome"] == "success"
    # step 3 began, so step 1 is over in this worker: its only episode hit the turn limit, and the log says so
    assert len(said) == 1 and said[0].startswith("warning: step 1: 1 of 1 episodes ended truncated")
    assert "they hit the turn limit" in said[0]


def test_horizon_follows_the_legacy_trainers_step(tmp_path: Path, tiny_model: Path, tokenizer: Any, trail_url: str):
    """verl's legacy RayPPOTrainer (trainer.use_v1=false) sets only the batch's meta_info["global_steps"]."""
    engine = TrailEngine(tokenizer)
    horizon = {"kind": "stepwise", "rounds": [1, 3], "every": 2}
    worker, dataset = make_worker(tmp_path, tiny_model, trail_url, engine, horizon=horizon)

    early = asyncio.run(run_sample(worker, dataset, 0, meta_step=1))  # no global_steps in the row
    assert early.extra_fields["agenthub_turns"] == 1
    assert early.extra_fields["agenthub_outcome"] == "truncated"
    late = asyncio.run(run_sample(worker, dataset, 0, meta_step=3))
    assert late.extra_fields["agenthub_turns"] == 3
    assert late.extra_fields["agenthub_outcome"] == "success"
