"""``HubWorkflow.arun_episode`` against real AReaL 1.0.4 and a real ``trail`` env server on loopback.

The engine is the canonical stand-in of ``standin_engine.py`` (AReaL's SGLang/vLLM engine needs a GPU);
everything else is real: AReaL's workflow base class, request/response types,
``check_trajectory_format``, ``GroupedRolloutWorkflow`` and ``concat_padded_tensors``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from agenthub import LocalServer, Outcome, Task, Trajectory
from agenthub.rollout import EnvPool, RunStore
from agenthub.training import StepOutcomeLog
from areal.api.cli_args import GenerationHyperparameters
from areal.api.io_struct import ModelRequest
from areal.infra import check_trajectory_format
from areal.infra.remote_inf_engine import GroupedRolloutWorkflow
from standin_engine import EngineCall, StandInEngine

from agenthub_trainer_areal import workflow as workflow_module
from agenthub_trainer_areal.workflow import GroupDropped, HubWorkflow, task_row

MAX_NEW_TOKENS = 8
ROW = task_row(Task(env="trail", task_id=3, split="train"))


def make_workflow(tokenizer: Any, pool: EnvPool, run_dir: Path, **kwargs: Any) -> HubWorkflow:
    store = RunStore.create({"test": True}, root=run_dir.parent, run_id=run_dir.name)
    store.close()
    kwargs.setdefault("gconfig", GenerationHyperparameters(max_new_tokens=MAX_NEW_TOKENS, temperature=0.7))
    return HubWorkflow(
        env="trail",
        tokenizer=tokenizer,
        max_context=1024,
        pool=pool,
        run_dir=str(store.path),
        **kwargs,
    )


def play_episode(
    tokenizer: Any, url: str, engine: StandInEngine, run_dir: Path, *, pool: dict[str, Any] | None = None, **kwargs: Any
) -> dict[str, Any] | None:
    """One ``HubWorkflow.arun_episode`` of ``ROW``, as AReaL's rollout worker calls it, against the server at ``url``.

    ``pool``: settings of the ``EnvPool`` over that server; ``kwargs``: the workflow's (``make_workflow``).
    """

    async def go() -> dict[str, Any] | None:
        async with EnvPool.from_urls([url], **(pool or {})) as env_pool:
            workflow = make_workflow(tokenizer, env_pool, run_dir, **kwargs)
            try:
                return await workflow.arun_episode(engine, ROW)
            finally:
                await workflow.close()

    return asyncio.run(go())


def stored(run_dir: Path) -> list[Trajectory]:
    return list(RunStore.existing(run_dir).trajectories())


def expected_rows(calls: list[EngineCall], length: int) -> tuple[list[int], list[float], list[int]]:
    """loss_mask, logprobs and versions as the engine's answers place them in a sequence of ``length``."""
    mask, logprobs, versions = [0] * length, [0.0] * length, [-1] * length
    for call in calls:
        start = len(call.input_ids)
        for i, (lp, v) in enumerate(zip(call.output_logprobs, call.output_versions, strict=True)):
            mask[start + i], logprobs[start + i], versions[start + i] = 1, lp, v
    return mask, logprobs, versions


def bump_version(engine: StandInEngine, request: ModelRequest) -> None:
    """A weight update after every turn: each turn is sampled by the next version."""
    engine.version = len(engine.calls)


def test_episode_tensors_match_the_trajectory_token_by_token(
    tokenizer: Any, trail_server: LocalServer, tmp_path: Path
) -> None:
    engine = StandInEngine(tokenizer, follow=True, on_call=bump_version)
    out = play_episode(tokenizer, trail_server.url, engine, tmp_path / "run")
    assert out is not None and check_trajectory_format(out)  # AReaL's own validation of a workflow's answer
    [trajectory] = stored(tmp_path / "run")
    trace = trajectory.tokens
    assert trace is not None and trajectory.outcome is Outcome.SUCCESS and len(trajectory.turns) == 3

    length = len(trace.prompt_ids) + len(trace.response_ids)
    assert set(out) == {"input_ids", "attention_mask", "loss_mask", "logprobs", "versions", "rewards"}
    for key, dtype in [("input_ids", torch.int32), ("loss_mask", torch.int32), ("versions", torch.int32)]:
        assert out[key].dtype == dtype and out[key].shape == (1, length)
    assert out["logprobs"].dtype == torch.float32 and out["attention_mask"].dtype == torch.bool
    assert out["rewards"].shape == (1,) and out["rewards"].tolist() == [1.0] == [trajectory.reward]
    assert out["attention_mask"].all()

    input_ids = out["input_ids"][0].tolist()
    assert input_ids == trace.prompt_ids + trace.response_ids
    # Token in, token out: the engine was given exactly the trained sequence's prefix each turn,
    # and its sampled tokens sit right after it, unchanged.
    assert len(engine.calls) == 3
    for call in engine.calls:
        assert input_ids[: len(call.input_ids)] == call.input_ids
        assert input_ids[len(call.input_ids) : len(call.input_ids) + len(call.output_tokens)] == call.output_tokens
    mask, logprobs, versions = expected_rows(engine.calls, length)
    assert out["loss_mask"][0].tolist() == mask == [0] * len(trace.prompt_ids) + trace.response_mask
    assert out["logprobs"][0].tolist() == pytest.approx(logprobs)
    assert out["versions"][0].tolist() == versions
    assert sorted({v for v in versions if v >= 0}) == [0, 1, 2]  # one weight version per turn, kept per token
    # What lies between two model turns is the env's answer, in the chat template, never trained on.
    for call, turn, after in zip(engine.calls, trajectory.turns, engine.calls[1:], strict=False):
        between = input_ids[len(call.input_ids) + len(call.output_tokens) : len(after.input_ids)]
        assert turn.observation in tokenizer.decode(between)
    # One request id per episode (prefix-cache stickiness), AReaL's stop ids, and the per-turn token cap.
    assert len({c.rid for c in engine.calls}) == 1
    assert tokenizer.eos_token_id in engine.calls[0].stop_token_ids
    assert {c.max_new_tokens for c in engine.calls} == {MAX_NEW_TOKENS}


def test_a_lost_episode_is_trained_on_with_its_reward(
    tokenizer: Any, trail_server: LocalServer, tmp_path: Path
) -> None:
    engine = StandInEngine(tokenizer, follow=False)
    out = play_episode(tokenizer, trail_server.url, engine, tmp_path / "run")
    [trajectory] = stored(tmp_path / "run")
    assert trajectory.outcome is Outcome.FAILURE and len(trajectory.turns) == 1
    assert out is not None and out["rewards"].tolist() == [trajectory.reward] == [0.0]
    assert int(out["loss_mask"].sum()) == len(engine.calls[0].output_tokens)


class StallOneEpisode:
    """Every request of the first episode that asks stalls past its timeout; the others are answered."""

    def __init__(self) -> None:
        self.rid: str | None = None

    def __call__(self, engine: StandInEngine, request: ModelRequest) -> Any:
        self.rid = self.rid or request.rid
        return asyncio.sleep(30) if request.rid == self.rid else None


def run_group(tokenizer: Any, server: LocalServer, run_dir: Path, size: int, **kwargs: Any) -> dict[str, Any] | None:
    """AReaL's GroupedRolloutWorkflow (``gconfig.n_samples=size``) over HubWorkflow, one stalled episode."""
    engine = StandInEngine(tokenizer, follow=True, on_call=StallOneEpisode())

    async def go() -> dict[str, Any] | None:
        async with EnvPool.from_urls([server.url]) as pool:
            gconfig = GenerationHyperparameters(max_new_tokens=MAX_NEW_TOKENS, temperature=0.7, n_samples=size)
            workflow = make_workflow(
                tokenizer, pool, run_dir, gconfig=gconfig, episode_timeout_s=2.0, max_attempts=1, **kwargs
            )
            group = GroupedRolloutWorkflow(workflow, size, logging.getLogger("test"))
            try:
                return await group.arun_episode(engine, ROW)
            finally:
                await workflow.close()

    return asyncio.run(go())


def test_a_group_stays_whole_when_an_episode_times_out(
    tokenizer: Any, trail_server: LocalServer, tmp_path: Path
) -> None:
    """The timed-out episode is played again: AReaL gets all 3 rows, as its fixed-size group normalisation needs."""
    out = run_group(tokenizer, trail_server, tmp_path / "run", 3)
    episodes = stored(tmp_path / "run")
    assert sorted(t.outcome.value for t in episodes) == ["success", "success", "success", "timeout"]
    assert out is not None and check_trajectory_format(out, batch_size=3)
    kept = [t for t in episodes if t.trainable]
    by_length = {len(t.tokens.prompt_ids) + len(t.tokens.response_ids): t for t in kept if t.tokens}
    for row in range(3):
        length = int(out["attention_mask"][row].sum())
        trace = by_length[length].tokens
        assert trace is not None
        assert out["input_ids"][row, :length].tolist() == trace.prompt_ids + trace.response_ids
        assert out["loss_mask"][row, :length].tolist() == [0] * len(trace.prompt_ids) + trace.response_mask
        assert out["loss_mask"][row, length:].sum() == 0  # padding is never trained on
    assert out["rewards"].tolist() == [1.0, 1.0, 1.0]


def test_a_group_whose_episode_fails_every_resample_is_dropped_whole(
    tokenizer: Any, trail_server: LocalServer, tmp_path: Path
) -> None:
    """No resample left: the group raises, which AReaL's workflow executor turns into rejecting all of it."""
    with pytest.raises(GroupDropped, match="drops its whole group of 3"):
        run_group(tokenizer, trail_server, tmp_path / "run", 3, resamples=0)
    assert "timeout" in [t.outcome.value for t in stored(tmp_path / "run")]


def kill_server_on_second_turn(server: LocalServer) -> Callable[[StandInEngine, ModelRequest], Any]:
    def on_call(engine: StandInEngine, request: ModelRequest) -> Any:
        if len(engine.calls) == 1:
            return asyncio.to_thread(server.kill)
        return None

    return on_call


def fail_to_align(engine: StandInEngine, request: ModelRequest) -> None:
    raise RuntimeError("the inference server went away")


@pytest.mark.parametrize("failure", ["env_error", "agent_error", "timeout"])
def test_infra_failures_return_none(tokenizer: Any, tmp_path: Path, failure: str) -> None:
    """Without a group (n_samples=1) and no resample left, the failed episode is None: AReaL rejects it."""
    with LocalServer("trail") as server:
        on_call = {
            "env_error": kill_server_on_second_turn(server),
            "agent_error": fail_to_align,
            "timeout": StallOneEpisode(),
        }[failure]
        engine = StandInEngine(tokenizer, follow=True, on_call=on_call)
        timeout = 2.0 if failure == "timeout" else None
        out = play_episode(
            tokenizer,
            server.url,
            engine,
            tmp_path / "run",
            pool={"unhealthy_wait_s": 1.0},  # a pool of URLs is never restarted; it gives up on a dead server after 1 s
            episode_timeout_s=timeout,
            max_attempts=2,
            resamples=0,
        )
        assert out is None
    [trajectory] = stored(tmp_path / "run")
    assert trajectory.outcome.value == failure and trajectory.error  # kept in the store, marked, with its cause


def test_a_retried_episode_trains_only_on_its_last_attempt(tokenizer: Any, tmp_path: Path) -> None:
    """The env server dies mid-episode; the pool restarts it and the episode starts over on a fresh session."""

    async def go() -> tuple[dict[str, Any] | None, StandInEngine]:
        async with await EnvPool.launch("trail", processes=1, health_interval_s=0.2) as pool:
            server = pool.endpoints[0].server
            assert server is not None
            engine = StandInEngine(tokenizer, follow=True, on_call=kill_server_on_second_turn(server))
            workflow = make_workflow(tokenizer, pool, tmp_path / "run", max_attempts=3)
            try:
                return await workflow.arun_episode(engine, ROW), engine
            finally:
                await workflow.close()

    out, engine = asyncio.run(go())
    [trajectory] = stored(tmp_path / "run")
    assert trajectory.outcome is Outcome.SUCCESS and trajectory.attempts == 2
    # Attempt 1 sampled two turns (the server died before the second one's step), attempt 2 all three.
    assert out is not None and len(engine.calls) == 2 + 3
    length = out["input_ids"].shape[1]
    mask, logprobs, _ = expected_rows(engine.calls[2:], length)
    assert out["loss_mask"][0].tolist() == mask
    assert out["logprobs"][0].tolist() == pytest.approx(logprobs)


def test_the_turn_limit_follows_the_engine_weight_version(
    tokenizer: Any, trail_server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ScalingInter-RL: the horizon schedule is read at AReaL's weight version (one per training step)."""
    said: list[str] = []
    monkeypatch.setattr(workflow_module, "STEP_LOG", StepOutcomeLog(emit=said.append))
    horizon = {"kind": "stepwise", "rounds": [1, 2], "every": 5}
    results = {}

    async def go() -> None:
        async with EnvPool.from_urls([trail_server.url]) as pool:
            workflow = make_workflow(tokenizer, pool, tmp_path / "run", horizon=horizon)
            try:
                for version in (0, 5):
                    engine = StandInEngine(tokenizer, follow=True, version=version)
                    results[version] = (await workflow.arun_episode(engine, ROW), len(engine.calls))
            finally:
                await workflow.close()

    asyncio.run(go())
    episodes = stored(tmp_path / "run")
    assert [t.task.max_turns for t in episodes] == [1, 2]
    assert [t.outcome for t in episodes] == [Outcome.TRUNCATED, Outcome.TRUNCATED]
    for version, episode in zip((0, 5), episodes, strict=True):
        out, calls = results[version]
        assert out is not None and calls == len(episode.turns) == episode.task.max_turns
        assert out["rewards"].tolist() == [pytest.approx(episode.reward)]
        assert episode.reward == pytest.approx(len(episode.turns) / 3)  # 1/forks per fork passed
        assert set(out["versions"][0][out["loss_mask"][0] == 1].tolist()) == {version}
    # version 5 began, so version 0 (step 1) is over in this worker: its one episode hit the turn limit
    assert len(said) == 1 and said[0].startswith("warning: step 1: 1 of 1 episodes ended truncated")


def test_a_turn_ends_at_the_templates_end_of_turn_token_too() -> None:
    """Llama 3 style: the turn ends at <|eot_id|>; a tokenizer whose eos is another token must stop there too."""
    from agenthub.testing import build_tokenizer

    from agenthub_trainer_areal.workflow import turn_gconfig

    tokenizer = build_tokenizer("llama3")
    end_of_turn = tokenizer.convert_tokens_to_ids("<|eot_id|>")
    tokenizer.eos_token = "<|end_of_text|>"  # as in a base model's tokenizer
    stops = turn_gconfig(GenerationHyperparameters(), tokenizer).stop_token_ids
    assert end_of_turn in stops and tokenizer.eos_token_id in stops and tokenizer.pad_token_id in stops
