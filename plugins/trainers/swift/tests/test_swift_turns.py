"""Colocate mode: swift's own multi-turn loop (``run_multi_turn``) drives the scheduler's per-turn hooks.

The per-turn generation is :class:`engines.StandInEngine` (the only double);
swift's loop, the hooks, the real ``trail`` server and swift's encoding are real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agenthub import Outcome, Task
from agenthub.rollout import RunStore
from engines import StandInEngine
from swift.infer_engine.protocol import ChatCompletionResponse, RequestConfig, RolloutInferRequest, RolloutOutput
from swift.rl_core.data import OnPolicySample
from swift.rlhf_trainers.utils import encode_sample
from swift.rollout import invoke_async_hook, run_multi_turn

from agenthub_trainer_swift.scheduler import TASK_COLUMN, AgenthubScheduler
from agenthub_trainer_swift.settings import SchedulerSettings


def play(scheduler: AgenthubScheduler, engine: StandInEngine, template: Any, task_ids: list[int]) -> list[Any]:
    """What swift's trainer does in colocate mode, with the stand-in engine in place of its model."""
    requests = [
        RolloutInferRequest(
            messages=[{"role": "user", "content": f"trail task {i}"}],
            data_dict={TASK_COLUMN: Task(env="trail", task_id=i, split="train").model_dump_json()},
            uuid=f"episode-{i}",
        )
        for i in task_ids
    ]
    invoke_async_hook(scheduler.on_trajectory_start(requests))

    def rollout(batch: list[RolloutInferRequest], config: RequestConfig) -> list[RolloutOutput]:
        outputs = []
        for r in batch:  # swift's template renders the conversation, as its engine does
            context = template.encode(r)["input_ids"]
            if engine.on_call is not None:
                engine.on_call(len(engine.calls))
            ids, logprobs = engine.sample(context, config.max_tokens)
            engine.calls.append((context, ids, logprobs))
            outputs.append(RolloutOutput(response=engine.response(ids, logprobs, ChatCompletionResponse)))
        return outputs

    config = RequestConfig(max_tokens=8, logprobs=True)
    template.set_mode("pt")
    try:
        first = rollout(requests, config)
        outputs = run_multi_turn(requests, first, scheduler, rollout, config, max_turns=3)
    finally:
        template.set_mode("train")
    samples = []
    for output in outputs:
        sample = OnPolicySample.from_row({"messages": [{"role": "user", "content": "placeholder"}]})
        sample.apply_rollout_output(rollout_output=output)
        samples.append((output, encode_sample(sample, template)))
    return samples


def make_scheduler(tokenizer: Any, template: Any, url: str, store: Path) -> AgenthubScheduler:
    settings = SchedulerSettings(env="trail", urls=[url], store=str(store), max_attempts=1)
    return AgenthubScheduler(None, 3, tokenizer=tokenizer, template=template, settings=settings)


def test_turn_hooks_mask_env_tokens(trail_server: Any, tokenizer: Any, swift_template: Any, tmp_path: Path) -> None:
    store = RunStore.create({}, root=tmp_path, run_id="run")
    engine = StandInEngine(tokenizer)
    scheduler = make_scheduler(tokenizer, swift_template, trail_server.url, store.path)

    results = play(scheduler, engine, swift_template, [1, 2])

    trajectories = {t.key: t for t in RunStore.existing(store.path).trajectories()}
    assert len(trajectories) == 2
    for output, enc in results:
        trajectory = trajectories[output.rollout_infos["agenthub_key"]]
        assert trajectory.outcome is Outcome.SUCCESS and output.rollout_infos["agenthub_reward"] == 1.0
        assert output.rollout_infos["num_turns"] == 3 == len(trajectory.turns)
        ids, labels = enc["input_ids"], enc["labels"]
        trained = [t for t, label in zip(ids, labels, strict=True) if label != -100]
        # Trained: exactly the sampled tokens of every turn, in order, token for token.
        assert trained == [t for turn in trajectory.turns for t in (turn.token_ids or [])]
        assert output.rollout_logprobs == [turn.logprobs for turn in trajectory.turns]
        # Not trained: the first observation and every env answer, which do appear in the sequence.
        untrained = tokenizer.decode([t for t, label in zip(ids, labels, strict=True) if label == -100])
        assert trajectory.first_observation in untrained
        for turn in trajectory.turns[:-1]:
            assert turn.observation in untrained


def test_turn_hooks_drop_an_infra_failure(
    trail_server: Any, tokenizer: Any, swift_template: Any, tmp_path: Path
) -> None:
    """The env server dies after the first turn: every token of the episode is out of the loss."""
    store = RunStore.create({}, root=tmp_path, run_id="run")

    def kill_on_second_turn(call: int) -> None:
        if call == 1:
            trail_server.kill()

    engine = StandInEngine(tokenizer, on_call=kill_on_second_turn)
    scheduler = make_scheduler(tokenizer, swift_template, trail_server.url, store.path)

    ((output, enc),) = play(scheduler, engine, swift_template, [4])

    (trajectory,) = list(RunStore.existing(store.path).trajectories())
    assert trajectory.outcome is Outcome.ENV_ERROR and len(trajectory.turns) == 1
    assert output.rollout_infos["agenthub_trainable"] is False
    assert all(label == -100 for label in enc["labels"])
    assert trajectory.first_observation in tokenizer.decode(enc["input_ids"])
    assert len(engine.calls) == 2  # the turn that found the server dead was the last one


@pytest.fixture
def stepwise(
    trail_server: Any, tokenizer: Any, swift_template: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[AgenthubScheduler, Path]:
    """ScalingInter-RL: 1 turn at step 0, 3 from step 1; 2 episodes a step. The scheduler and its store.

    No training step is recorded yet: the module's record of one is cleared for the test (and put back after).
    """
    from agenthub_trainer_swift import horizon as horizon_module

    monkeypatch.setattr(horizon_module, "_trainer_step", None)
    store = RunStore.create({}, root=tmp_path, run_id="run")
    horizon = {"kind": "stepwise", "rounds": [1, 3], "every": 1}
    settings = SchedulerSettings(
        env="trail",
        urls=[trail_server.url],
        store=str(store.path),
        max_attempts=1,
        horizon=horizon,
        episodes_per_step=2,
    )
    scheduler = AgenthubScheduler(None, 3, tokenizer=tokenizer, template=swift_template, settings=settings)
    return scheduler, store.path


def test_the_turn_limit_follows_swifts_training_step(
    stepwise: tuple[AgenthubScheduler, Path], tokenizer: Any, swift_template: Any
) -> None:
    """swift rlhf: the agenthub_step callback records TrainerState.global_step; the scheduler reads it."""
    from transformers import TrainerState

    from agenthub_trainer_swift.step_callback import TrainingStepCallback

    scheduler, store = stepwise
    callback = TrainingStepCallback(None, None)
    turns = {}
    for step in (0, 1, 0):  # 0 again: the step is swift's, not a count of episodes
        callback.on_step_begin(None, TrainerState(global_step=step), None)
        results = play(scheduler, StandInEngine(tokenizer), swift_template, [1, 2, 3])
        turns[len(turns)] = [output.rollout_infos["num_turns"] for output, _ in results]
    assert turns == {0: [1, 1, 1], 1: [3, 3, 3], 2: [1, 1, 1]}
    limits = [t.task.max_turns for t in RunStore.existing(store).trajectories()]
    assert limits == [1, 1, 1, 3, 3, 3, 1, 1, 1]


def test_without_a_trainer_the_step_is_counted_from_episodes(
    stepwise: tuple[AgenthubScheduler, Path], tokenizer: Any, swift_template: Any
) -> None:
    """swift rollout (server mode) sees no trainer state: each step is episodes_per_step episodes."""
    scheduler, _store = stepwise
    results = play(scheduler, StandInEngine(tokenizer), swift_template, [1, 2, 3, 4])
    assert [output.rollout_infos["num_turns"] for output, _ in results] == [1, 1, 3, 3]
