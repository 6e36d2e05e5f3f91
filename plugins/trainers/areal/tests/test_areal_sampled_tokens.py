"""Token by token: what AReaL trains on is exactly what its engine sampled, from a real tiny model.

The engine is ``sampling_engine.SamplingEngine`` (AReaL's SGLang/vLLM engine needs a GPU): it
samples ids from a tiny local model, so most turns are sequences a decode and re-encode would
change. Episodes run on a real ``trail`` env server on loopback, through AReaL's own entry point
(``GroupedRolloutWorkflow.arun_episode`` over ``HubWorkflow``, as AReaL's workflow executor calls
it), and every row of the tensor dicts AReaL receives is checked against every ``agenerate`` call
with ``agenthub.testing.token_checks.check_sampled_turns``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

import pytest
from agenthub import LocalServer, Task
from agenthub.rollout import EnvPool, Generation, RunStore, SamplingParams, inject_generation_fault
from agenthub.testing import EngineAnswer, ModelSampler, SequenceView, build_tiny_model, check_sampled_turns
from areal.api.cli_args import GenerationHyperparameters
from areal.api.io_struct import ModelRequest
from areal.infra import check_trajectory_format
from areal.infra.remote_inf_engine import GroupedRolloutWorkflow
from sampling_engine import SamplingEngine

from agenthub_trainer_areal.errors import ArealAdapterError
from agenthub_trainer_areal.workflow import HubWorkflow, task_row, turn_gconfig

# Short enough that turns are cut at the limit as well as stopped (5 and 11 of 16 here): at 10 only one
# turn in 16 was cut, so a run could have none left to check (swift's test of the same kind failed so in CI).
MAX_NEW_TOKENS = 5
GROUP = 2
TASKS = [Task(env="trail", task_id=i, split="train") for i in (3, 5, 7)]


@pytest.fixture
def trail_url(trail_server: LocalServer) -> str:
    return trail_server.url


@pytest.fixture(scope="session", params=["chatml", "qwen3"])
def model_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp(f"tiny-{request.param}"), template=request.param)


def sampling_engine(model_dir: Path) -> SamplingEngine:
    return SamplingEngine(ModelSampler(model_dir, seed=1), bump_version=True)


async def play(engine: SamplingEngine, url: str, run_dir: Path, *, grouped: bool = True) -> list[dict[str, Any]]:
    """Each task through AReaL's entry point: the tensor dicts AReaL receives.

    ``grouped``: each task as one GRPO group of ``GROUP`` episodes (``GroupedRolloutWorkflow``, as AReaL's
    workflow executor runs it). Otherwise ``GROUP`` single episodes per task (``HubWorkflow.arun_episode``,
    what the group calls), and an episode whose workflow raises is left out, as AReaL's workflow executor
    rejects it; one at a time, since a group's ``gather`` would leave the raiser's siblings running.
    """
    store = RunStore.create({"test": True}, root=run_dir.parent, run_id=run_dir.name)
    store.close()
    gconfig = GenerationHyperparameters(
        max_new_tokens=MAX_NEW_TOKENS, temperature=1.0, n_samples=GROUP if grouped else 1
    )
    outs: list[dict[str, Any]] = []
    async with EnvPool.from_urls([url]) as pool:
        workflow = HubWorkflow(
            env="trail",
            tokenizer=engine.sampler.tokenizer,
            gconfig=gconfig,
            max_context=1024,
            pool=pool,
            run_dir=str(store.path),
        )
        group = GroupedRolloutWorkflow(workflow, GROUP, logging.getLogger("test"))
        try:
            for task in TASKS:
                if grouped:
                    out = await group.arun_episode(engine, task_row(task))
                    assert out is not None and check_trajectory_format(out, batch_size=GROUP)
                    outs.append(out)
                    continue
                for _ in range(GROUP):
                    with contextlib.suppress(ArealAdapterError):
                        single = await workflow.arun_episode(engine, task_row(task))
                        assert single is not None and check_trajectory_format(single)
                        outs.append(single)
        finally:
            await workflow.close()
    return outs


def views(outs: list[dict[str, Any]], field: str = "logprobs") -> list[SequenceView]:
    """Every row AReaL receives, unpadded, as one sequence: AReaL's rows have no prompt/response split
    (the loss mask says what was sampled), so the whole row is the "response". ``field``: the per-token
    values to compare with the engine's (logprobs, or the weight versions)."""
    out_views = []
    for g, out in enumerate(outs):
        for row in range(out["input_ids"].shape[0]):
            length = int(out["attention_mask"][row].sum())
            assert out["loss_mask"][row, length:].sum() == 0  # padding is never trained on
            out_views.append(
                SequenceView(
                    [],
                    out["input_ids"][row, :length].tolist(),
                    out["loss_mask"][row, :length].tolist(),
                    [float(x) for x in out[field][row, :length].tolist()],
                    f"group {g} row {row}",
                )
            )
    return out_views


def test_areal_trains_on_the_sampled_tokens_token_by_token(model_dir: Path, trail_url: str, tmp_path: Path) -> None:
    engine = sampling_engine(model_dir)
    outs = asyncio.run(play(engine, trail_url, tmp_path / "run"))
    assert len(outs) == len(TASKS)

    # Every answer is in exactly one row, right after its prompt, ids and logprobs as sampled, masked 1;
    # nothing is cut or dropped here (no retry, no context overflow), so no allowance is given.
    tally = check_sampled_turns(views(outs), engine.answers())
    assert tally.sequences == GROUP * len(TASKS)
    assert tally.answers == len(engine.calls)
    assert tally.multi_turn_sequences >= 3, tally
    # The check has teeth: many of those answers are not what the tokenizer makes of their text.
    assert len(engine.non_canonical()) >= 3, f"{len(engine.non_canonical())} of {len(engine.calls)}"
    assert {c.response.stop_reason for c in engine.calls} == {"stop", "length"}

    # The weight version goes up after every call, so each turn has its own: AReaL's per-token versions
    # are those the engine stamped, token by token (checked with the versions in the logprobs' place).
    versions = [
        EngineAnswer(c.input_ids, c.response.output_tokens, [float(v) for v in c.response.output_versions])
        for c in engine.calls
    ]
    assert check_sampled_turns(views(outs, "versions"), versions, logprob_tolerance=0).answers == len(versions)

    # AReaL's engine was asked as the workflow means it: the turn cap (the context never runs short
    # here), the workflow's stop ids, and one request id per episode (the same server every turn).
    assert {c.max_new_tokens for c in engine.calls} == {MAX_NEW_TOKENS}
    stops = turn_gconfig(GenerationHyperparameters(), engine.sampler.tokenizer).stop_token_ids
    assert {tuple(sorted(set(c.stop_token_ids))) for c in engine.calls} == {tuple(sorted(set(stops)))}
    assert len({c.rid for c in engine.calls}) == GROUP * len(TASKS)


def test_the_sampling_engine_keeps_areals_token_budget(model_dir: Path) -> None:
    """As ``RemoteInfEngine.agenerate``: a turn gets at most ``max_tokens - len(input_ids)`` new tokens
    (and at least ``min_new_tokens``, as SGLang keeps the stop ids back until then)."""
    engine = sampling_engine(model_dir)
    tokenizer = engine.sampler.tokenizer
    prompt = tokenizer.encode("Fork 1 of 3: the sign points left.", add_special_tokens=False)
    stops = [tokenizer.eos_token_id]
    gconfig = GenerationHyperparameters(
        max_new_tokens=50, min_new_tokens=2, max_tokens=len(prompt) + 3, stop_token_ids=stops
    )
    responses = [asyncio.run(engine.agenerate(ModelRequest(input_ids=prompt, gconfig=gconfig))) for _ in range(4)]
    assert all(2 <= r.output_len <= 3 for r in responses) and {c.max_new_tokens for c in engine.calls} == {3}
    assert all((r.stop_reason == "stop") == (r.output_tokens[-1] in stops) for r in responses)
    assert all(len(r.output_logprobs) == len(r.output_versions) == r.output_len for r in responses)
    with pytest.raises(RuntimeError, match="non-positive"):
        asyncio.run(engine.agenerate(ModelRequest(input_ids=prompt, gconfig=gconfig.new(max_tokens=len(prompt)))))


def test_a_workflow_that_re_encodes_its_turns_is_caught(model_dir: Path, trail_url: str, tmp_path: Path) -> None:
    """The review's patch: each sampled turn is decoded and encoded again before it enters the trace."""
    engine = sampling_engine(model_dir)

    def re_encoding(generation: Generation, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        tokenizer = engine.sampler.tokenizer
        ids = list(tokenizer.encode(tokenizer.decode(generation.token_ids), add_special_tokens=False))
        logprobs = ((generation.logprobs or []) + [0.0] * len(ids))[: len(ids)]
        return Generation(ids[: sampling.max_tokens], logprobs[: sampling.max_tokens], generation.finish_reason)

    with inject_generation_fault(re_encoding):
        outs = asyncio.run(play(engine, trail_url, tmp_path / "run", grouped=False))
    # Where re-encoding changed an episode's token count, the adapter's own guard (the per-token versions
    # no longer line up with the trace) raised and AReaL rejects the episode: those turns never reach it.
    assert len(outs) < GROUP * len(TASKS), f"all {len(outs)} episodes reached AReaL"
    with pytest.raises(AssertionError, match="re-encoded"):
        check_sampled_turns(views(outs), engine.answers())
