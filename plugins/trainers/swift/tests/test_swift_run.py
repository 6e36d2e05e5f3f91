"""Server mode: ``AgenthubScheduler.run`` plays whole episodes with the hub executor against a real env server.

The engine is :class:`engines.StandInEngine` (swift's vLLM engine needs a GPU);
everything else is real: the ``trail`` server on 127.0.0.1, the executor,
swift's ``RolloutOutput`` and swift's own encoding of it for training.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agenthub import Outcome, Task
from agenthub.rollout import RunStore
from engines import StandInEngine
from swift.infer_engine.protocol import RequestConfig, RolloutInferRequest, RolloutOutput
from swift.rl_core.data import OnPolicySample
from swift.rlhf_trainers.utils import encode_sample

from agenthub_trainer_swift.reward import EnvReward, env_rewards
from agenthub_trainer_swift.scheduler import TASK_COLUMN, AgenthubScheduler
from agenthub_trainer_swift.settings import SchedulerSettings


def request(task_id: int, uuid: str) -> RolloutInferRequest:
    task = Task(env="trail", task_id=task_id, split="train")
    return RolloutInferRequest(
        messages=[{"role": "user", "content": f"trail task {task_id}"}],
        data_dict={TASK_COLUMN: task.model_dump_json()},
        uuid=uuid,
    )


def scheduler(engine: StandInEngine, tokenizer: Any, url: str, store: Path, **settings: Any) -> AgenthubScheduler:
    config = SchedulerSettings(env="trail", urls=[url], max_tokens=8, max_context=512, store=str(store), **settings)
    return AgenthubScheduler(infer_engine=engine, max_turns=None, tokenizer=tokenizer, settings=config)


def encoded(output: RolloutOutput, template: Any) -> dict[str, Any]:
    """What swift's GRPO trainer trains on for this output."""
    sample = OnPolicySample.from_row({"messages": [{"role": "user", "content": "placeholder"}]})
    sample.apply_rollout_output(rollout_output=output)
    return dict(encode_sample(sample, template))


def test_run_returns_the_episode_token_by_token(
    trail_server: Any, tokenizer: Any, swift_template: Any, tmp_path: Path
) -> None:
    store = RunStore.create({}, root=tmp_path, run_id="run")
    engine = StandInEngine(tokenizer)
    sched = scheduler(engine, tokenizer, trail_server.url, store.path)
    config = RequestConfig(temperature=0.7, top_p=0.9, max_tokens=8)

    output = asyncio.run(sched.run(request(5, "episode-5"), config))

    assert isinstance(output, RolloutOutput)
    (trajectory,) = list(RunStore.existing(store.path).trajectories())
    assert trajectory.outcome is Outcome.SUCCESS and trajectory.reward == pytest.approx(1.0)
    trace = trajectory.tokens
    assert trace is not None
    assert output.response_token_ids == [trace.response_ids]
    assert output.response_loss_mask == [trace.response_mask]
    assert output.rollout_infos["agenthub_reward"] == pytest.approx(1.0)
    assert output.rollout_infos["agenthub_outcome"] == "success"
    assert output.rollout_infos["agenthub_trainable"] is True
    assert output.rollout_infos["num_turns"] == 3 == len(engine.calls)

    # Token in: each turn was sampled from exactly the prompt plus the episode so far.
    ids, mask = trace.response_ids, trace.response_mask
    position = 0
    sampled_logprobs: list[float] = []
    for context, sampled, logprobs in engine.calls:
        assert context == trace.prompt_ids + ids[:position]
        # Token out: the sampled ids sit where the mask is 1, exactly as sampled, with their logprobs.
        assert ids[position : position + len(sampled)] == sampled
        assert mask[position : position + len(sampled)] == [1] * len(sampled)
        sampled_logprobs += logprobs
        position += len(sampled)
        while position < len(ids) and mask[position] == 0:  # the template close and the env's answer
            position += 1
    assert position == len(ids)
    assert output.rollout_logprobs == [sampled_logprobs]
    assert sum(mask) == len(sampled_logprobs)

    # Env tokens carry mask 0: every observation after the first sits in a mask-0 span.
    env_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
    for turn in trajectory.turns[:-1]:
        assert turn.observation in env_text
    model_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 1])
    assert "sign" not in model_text

    # swift's own encoding trains on exactly the sampled tokens of exactly this sequence.
    enc = encoded(output, swift_template)
    assert enc["input_ids"] == trace.prompt_ids + ids
    labels = enc["labels"][len(trace.prompt_ids) :]
    assert [int(label != -100) for label in labels] == mask
    assert all(label == -100 for label in enc["labels"][: len(trace.prompt_ids)])


def test_an_infra_failure_is_not_trained_on(
    trail_server: Any, tokenizer: Any, swift_template: Any, tmp_path: Path
) -> None:
    """The env server dies after the first model turn: the episode is env_error and nothing of it is trained."""

    def kill_on_second_turn(call: int) -> None:
        if call == 1:
            trail_server.kill()

    store = RunStore.create({}, root=tmp_path, run_id="run")
    engine = StandInEngine(tokenizer, on_call=kill_on_second_turn)
    sched = scheduler(engine, tokenizer, trail_server.url, store.path, max_attempts=1)

    output = asyncio.run(sched.run(request(7, "episode-7"), RequestConfig(temperature=1.0, max_tokens=8)))

    (trajectory,) = list(RunStore.existing(store.path).trajectories())
    assert trajectory.outcome is Outcome.ENV_ERROR and not trajectory.trainable
    assert trajectory.tokens is not None and sum(trajectory.tokens.response_mask) > 0  # it did sample tokens
    assert output.response_token_ids == [trajectory.tokens.response_ids]
    assert output.response_loss_mask == [[0] * len(trajectory.tokens.response_ids)]
    assert output.rollout_logprobs == []
    assert output.rollout_infos["agenthub_trainable"] is False
    assert output.rollout_infos["agenthub_outcome"] == "env_error"
    assert all(label == -100 for label in encoded(output, swift_template)["labels"])

    # Its reward is its group's mean over the trainable episodes: zero advantage, the others' unchanged.
    infos = [
        {"agenthub_reward": 1.0, "agenthub_trainable": True},
        {"agenthub_reward": 0.0, "agenthub_trainable": True},
        output.rollout_infos,
        {"agenthub_reward": 0.3, "agenthub_trainable": True},
    ]
    rewards = EnvReward()(completions=["a", "b", "c", "d"], rollout_infos=infos, prompt_id=["p", "p", "p", "q"])
    assert rewards == [1.0, 0.0, 0.5, 0.3]


def test_an_episode_that_never_started_is_not_trained_on(tokenizer: Any, swift_template: Any, tmp_path: Path) -> None:
    """No env server at all: no tokens were sampled; swift still gets an encodable, fully masked sample."""
    from agenthub import LocalServer

    with LocalServer("trail") as server:
        url = server.url
    store = RunStore.create({}, root=tmp_path, run_id="run")
    engine = StandInEngine(tokenizer)
    sched = scheduler(engine, tokenizer, url, store.path, max_attempts=1)

    output = asyncio.run(sched.run(request(3, "episode-3"), RequestConfig(max_tokens=8)))

    assert engine.calls == []
    (trajectory,) = list(RunStore.existing(store.path).trajectories())
    assert trajectory.outcome is Outcome.ENV_ERROR and "no env server answered" in (trajectory.error or "")
    assert output.response_token_ids == [[tokenizer.eos_token_id]] and output.response_loss_mask == [[0]]
    assert output.rollout_infos["agenthub_trainable"] is False
    assert output.messages[0] == {"role": "user", "content": "trail task 3"}
    assert all(label == -100 for label in encoded(output, swift_template)["labels"])


def test_env_rewards_refuse_rows_without_the_scheduler(tokenizer: Any) -> None:
    with pytest.raises(ValueError, match="multi_turn_scheduler agenthub"):
        env_rewards([{"num_turns": 1}], ["p"])
