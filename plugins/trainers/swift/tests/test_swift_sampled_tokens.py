"""Token by token against an engine that samples from a real model: what swift trains on is what was sampled.

The engine is :class:`sampling_engine.SamplingEngine` (swift's vLLM engine needs a
GPU), which samples every turn from a tiny real model, so most turns are id
sequences that a decode and re-encode would change. Everything else is real: the
``trail`` server on 127.0.0.1, the scheduler's ``run()`` (server mode) called as
``swift rollout`` calls it, swift's ``run_multi_turn`` loop over the scheduler's
hooks (colocate mode) fed by the engine's batch ``infer`` as swift's trainer
feeds it, and swift's own ``encode_sample`` of each rollout, whose ids and
labels are the training sequences checked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from agenthub import LocalServer, Task
from agenthub.rollout import Generation, RunStore, SamplingParams, inject_generation_fault
from agenthub.testing import CheckTally, SequenceView, check_sampled_turns
from sampling_engine import SamplingEngine
from swift.infer_engine.protocol import RequestConfig, RolloutInferRequest, RolloutOutput
from swift.rl_core.data import OnPolicySample
from swift.rlhf_trainers.utils import encode_sample
from swift.rollout import invoke_async_hook, run_multi_turn
from swift.template import Template

from agenthub_trainer_swift.scheduler import TASK_COLUMN, AgenthubScheduler
from agenthub_trainer_swift.settings import SchedulerSettings

EPISODES = 6
# Short enough that every run has turns cut at max_tokens as well as turns that stop: the tiny model stops
# within 10 tokens about 9 times in 10, so at 10 one run in CI had no cut turn left to check.
MAX_TOKENS = 5
# Qwen3's chat template renders the generation prompt without a think block; of swift's Qwen3 templates,
# qwen3_nothinking renders [system, user] the same way (swift's `qwen3` adds an empty think block).
TEMPLATES = {"chatml": "chatml", "qwen3": "qwen3_nothinking"}


@dataclass(frozen=True)
class Model:
    """A tiny model and the swift template whose rendering of a prompt matches its tokenizer's chat template."""

    path: Path
    template_type: str

    def template(self) -> Any:
        """A fresh swift template in training mode (the engine gets one of its own: it switches it to vllm)."""
        from swift.model import get_processor
        from swift.template import get_template

        template = get_template(get_processor(str(self.path), model_type="qwen2"), template_type=self.template_type)
        template.set_mode("train")
        return template


@pytest.fixture(scope="session", params=sorted(TEMPLATES))
def model(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Model:
    from agenthub.testing import build_tiny_model

    path = build_tiny_model(tmp_path_factory.mktemp(f"sampled-{request.param}") / "model", template=request.param)
    return Model(path, TEMPLATES[request.param])


@pytest.fixture(scope="module")
def trail_url() -> Iterator[str]:
    with LocalServer("trail") as server:
        yield server.url


def request(task_id: int) -> RolloutInferRequest:
    task = Task(env="trail", task_id=task_id, split="train")
    return RolloutInferRequest(
        messages=[{"role": "user", "content": f"trail task {task_id}"}],
        data_dict={TASK_COLUMN: task.model_dump_json()},
        uuid=f"episode-{task_id}",
    )


def trainer_request_config() -> RequestConfig:
    """The GRPO trainer's request config (rollout_mixin: n=1, return_details, logprobs with vLLM)."""
    return RequestConfig(n=1, max_tokens=MAX_TOKENS, temperature=1.0, return_details=True, logprobs=True)


@dataclass
class Trained:
    """What swift trains on for one rollout, as the check takes it, and how many dynamic-EOS spans it had."""

    view: SequenceView
    sampled_mask: list[int]
    dynamic_eos: int


def trained(output: RolloutOutput, template: Any, prompt_len: int, name: str) -> Trained:
    """swift's own encoding of ``output`` (as its GRPO trainer makes it), split after ``prompt_len`` ids.

    The mask is swift's labels (``labels != -100``: its completion mask) less its "dynamic EOS":
    swift also trains the template suffix (``<|im_end|>`` and a newline) that the rollout put
    after a turn which did not end with it (cut at ``max_tokens``, or ended on another stop id;
    see the README). Those ids were never sampled; encoding again without ``_add_dynamic_eos``
    shows exactly which they are, and they are asserted to be nothing else, so that every other
    trained id must be an engine answer.
    """
    sample = OnPolicySample.from_row({"messages": [{"role": "user", "content": "placeholder"}]})
    sample.apply_rollout_output(rollout_output=output)
    enc = encode_sample(sample, template)
    with mock.patch.object(Template, "_add_dynamic_eos", staticmethod(lambda *args: None)):
        plain = encode_sample(sample, template)
    ids, labels, own = list(enc["input_ids"]), list(enc["labels"]), list(plain["labels"])
    assert list(plain["input_ids"]) == ids, name
    suffix = template._encode_context_list(template.template_meta.suffix)[0]  # as swift's _add_dynamic_eos
    expected, spans = list(own), 0
    for start in range(1, len(own)):
        if labels[start] != own[start] and own[start - 1] != -100 and own[start] == -100:
            assert ids[start : start + len(suffix)] == suffix, f"{name}: swift trains unsampled ids at {start}"
            expected[start : start + len(suffix)] = suffix
            spans += 1
    assert labels == expected, f"{name}: swift's labels differ from the rollout's mask beyond its dynamic EOS"
    assert all(label == -100 for label in own[:prompt_len]), f"{name}: swift trains on the prompt"
    mask = [int(label != -100) for label in own[prompt_len:]]
    # rollout_logprobs go onto the 1s of swift's completion mask, in order (build_rollout_logps).
    flat = [lp for turn in output.rollout_logprobs for lp in turn]
    assert len(flat) == sum(mask), f"{name}: {len(flat)} rollout logprobs for {sum(mask)} trained ids"
    logprobs = iter(flat)
    response = ids[prompt_len:]
    view = SequenceView(ids[:prompt_len], response, mask, [next(logprobs) if m else 0.0 for m in mask], name)
    sampled = [m for turn in output.response_loss_mask for m in turn]
    return Trained(view, sampled, spans)


def server_mode(
    engine: SamplingEngine, url: str, store: Path, template: Any, config: RequestConfig | None = None
) -> list[Trained]:
    """``swift rollout --multi_turn_scheduler agenthub``: concurrent ``run()`` calls, one per episode."""
    settings = SchedulerSettings(
        env="trail", urls=[url], max_tokens=MAX_TOKENS, max_context=1024, store=str(store), max_attempts=1
    )
    scheduler = AgenthubScheduler(infer_engine=engine, max_turns=None, tokenizer=engine.tokenizer, settings=settings)
    requests = [request(i) for i in range(EPISODES)]

    async def play() -> list[RolloutOutput]:
        return list(await asyncio.gather(*(scheduler.run(r, config or trainer_request_config()) for r in requests)))

    outputs = asyncio.run(play())
    trajectories = {t.key: t for t in RunStore.existing(store).trajectories()}
    results = []
    for r, output in zip(requests, outputs, strict=True):
        trajectory = trajectories[str(r.uuid)]
        assert trajectory.trainable and trajectory.tokens is not None, trajectory.error
        prompt = list(trajectory.tokens.prompt_ids)
        result = trained(output, template, len(prompt), str(r.uuid))
        # swift's sequence is the episode's: the prompt the engine was first asked with, then the trace.
        assert result.view.prompt_ids == prompt and result.view.response_ids == trajectory.tokens.response_ids
        assert result.view.response_mask == result.sampled_mask == trajectory.tokens.response_mask
        results.append(result)
    return results


def colocate_mode(engine: SamplingEngine, url: str, store: Path, template: Any, **patches: Any) -> list[Trained]:
    """``swift rlhf`` without a rollout server: its trainer's multi-turn loop over the scheduler's hooks.

    As ``RolloutTrainerMixin._infer_single_or_multi_turn``: ``on_trajectory_start``, a first turn,
    then ``run_multi_turn`` with the engine's batch ``infer`` (``_engine_infer``) as its rollout.
    """
    settings = SchedulerSettings(env="trail", urls=[url], store=str(store), max_attempts=1)
    scheduler = AgenthubScheduler(max_turns=3, tokenizer=engine.tokenizer, template=template, settings=settings)
    for name, value in patches.items():
        setattr(scheduler, name, value)
    requests = [request(i) for i in range(EPISODES)]
    invoke_async_hook(scheduler.on_trajectory_start(requests))

    def rollout(batch: list[RolloutInferRequest], config: RequestConfig) -> list[RolloutOutput]:
        return [RolloutOutput(response=response) for response in engine.infer(batch, config)]

    config = trainer_request_config()
    outputs = run_multi_turn(requests, rollout(requests, config), scheduler, rollout, config, max_turns=3)
    trajectories = {t.key: t for t in RunStore.existing(store).trajectories()}
    results = []
    for output in outputs:
        key = output.rollout_infos["agenthub_key"]
        assert trajectories[key].trainable, trajectories[key].error
        # Split at 0: the whole sequence is the response, so every answer's prompt must be a prefix of it.
        results.append(trained(output, template, 0, key))
    return results


def checked(results: list[Trained], engine: SamplingEngine) -> CheckTally:
    tally = check_sampled_turns([r.view for r in results], engine.answers())
    assert tally.answers == len(engine.asked) and tally.sequences == EPISODES
    assert tally.multi_turn_sequences >= 3, tally
    # The samples are the model's, not the tokenizer's: these would change if decoded and re-encoded.
    sampler = engine.sampler
    assert len(sampler.non_canonical()) >= 3, f"{len(sampler.non_canonical())} of {len(sampler.samples)}"
    assert {s.finish_reason for s in sampler.samples} == {"stop", "length"}
    return tally


def test_server_mode_trains_on_the_models_samples_token_by_token(model: Model, trail_url: str, tmp_path: Path) -> None:
    engine = SamplingEngine(model.path, model.template(), seed=1)
    store = RunStore.create({}, root=tmp_path, run_id="run")

    results = server_mode(engine, trail_url, store.path, model.template())

    checked(results, engine)
    assert all(a.request_config.max_tokens <= MAX_TOKENS for a in engine.asked)


def test_server_mode_asks_for_token_ids_whatever_the_callers_config(
    model: Model, trail_url: str, tmp_path: Path
) -> None:
    """swift's ``RequestConfig()`` has ``return_details=False``, with which its engines answer without ids."""
    engine = SamplingEngine(model.path, model.template(), seed=3)
    store = RunStore.create({}, root=tmp_path, run_id="run")

    results = server_mode(engine, trail_url, store.path, model.template(), RequestConfig(temperature=1.0))

    checked(results, engine)
    assert all(a.request_config.return_details and a.request_config.logprobs for a in engine.asked)


def test_server_mode_catches_a_policy_that_re_encodes_its_turns(model: Model, trail_url: str, tmp_path: Path) -> None:
    """The review's patch: each sampled turn is decoded and encoded again before it enters the episode."""
    engine = SamplingEngine(model.path, model.template(), seed=1)

    def re_encoding(generation: Generation, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        tokenizer = engine.tokenizer
        ids = list(tokenizer.encode(tokenizer.decode(generation.token_ids), add_special_tokens=False))
        logprobs = ((generation.logprobs or []) + [0.0] * len(ids))[: len(ids)]
        return Generation(ids[: sampling.max_tokens], logprobs[: sampling.max_tokens], generation.finish_reason)

    with inject_generation_fault(re_encoding):
        store = RunStore.create({}, root=tmp_path, run_id="run")
        results = server_mode(engine, trail_url, store.path, model.template())
    with pytest.raises(AssertionError, match="re-encoded"):
        check_sampled_turns([r.view for r in results], engine.answers())


def test_colocate_mode_trains_on_the_models_samples_token_by_token(
    model: Model, trail_url: str, tmp_path: Path
) -> None:
    engine = SamplingEngine(model.path, model.template(), seed=2)
    store = RunStore.create({}, root=tmp_path, run_id="run")

    results = colocate_mode(engine, trail_url, store.path, model.template())

    checked(results, engine)
    for result in results:  # the env's answers are in the sequence, out of the loss
        assert sum(result.view.response_mask) < len(result.view.response_ids)


def test_colocate_mode_catches_turns_kept_as_text(model: Model, trail_url: str, tmp_path: Path) -> None:
    """Without swift's token-backed history, each turn is re-encoded from its text for the next prompt."""
    engine = SamplingEngine(model.path, model.template(), seed=2)
    store = RunStore.create({}, root=tmp_path, run_id="run")

    def keep_text(infer_request: Any, token_ids: list[int]) -> None:
        """swift freezes the last assistant message as its ids here; leaving its text is the bug."""

    results = colocate_mode(engine, trail_url, store.path, model.template(), set_assistant_message_token_ids=keep_text)
    with pytest.raises(AssertionError, match="re-encoded"):
        check_sampled_turns([r.view for r in results], engine.answers())
