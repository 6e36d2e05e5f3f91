"""Shared pieces: a tiny local model, a real ``trail`` server, verl's own config and agent-loop worker."""

from __future__ import annotations

import abc
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agenthub import ThreadedServer, get_plugin_host
from agenthub.testing import ModelSampler

SIGN = re.compile(r"sign points (left|right)")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random Qwen2-style model and its ChatML tokenizer, built here (no download)."""
    from agenthub.testing import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def tokenizer(tiny_model: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_model))


@pytest.fixture(scope="session")
def trail_url() -> Iterator[str]:
    """A real ``trail`` env server on loopback."""
    with ThreadedServer(get_plugin_host().env("trail")) as server:
        yield server.url


class EngineDouble(abc.ABC):
    """verl's server-manager interface, for the doubles of its GPU engine (vLLM/SGLang cannot run here).

    ``generate(request_id, prompt_ids=..., sampling_params=...)`` answers with verl's own ``TokenOutput``:
    ``stop_reason="completed"`` whether the turn ended on a stop id or at ``max_tokens`` (vLLM's "stop" and
    "length" both map to it) and the weight version (``global_steps``) in ``extra_fields``. A double says
    only what it answers (:meth:`answer`); every call is recorded in ``calls`` with the request.
    """

    def __init__(self, *, global_steps: int = 1) -> None:
        self.global_steps = global_steps
        self.calls: list[dict[str, Any]] = []

    @abc.abstractmethod
    def answer(self, prompt_ids: list[int], params: dict[str, Any]) -> dict[str, Any]:
        """``token_ids`` and ``logprobs`` (None when not asked for) for a prompt, and what else to record."""

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any
    ) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        params = dict(sampling_params)
        answered = self.answer(list(prompt_ids), params)
        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "sampling": params, **answered})
        step = dict.fromkeys(("global_steps", "min_global_steps", "max_global_steps"), self.global_steps)
        return TokenOutput(
            token_ids=answered["token_ids"],
            log_probs=answered["logprobs"],
            stop_reason="completed",
            num_preempted=0,
            extra_fields=step,
        )


class TrailEngine(EngineDouble):
    """Stand-in for verl's GPU inference engine (``server_manager``), for the rewards and outcomes tests.

    It reads the last sign in the prompt and replies with that direction (or the other
    one with ``wrong=True``) and the end-of-turn token, with made-up but distinct
    logprobs. ``on_call(n)`` runs before the n-th call (0-based).

    Its answers are the tokenizer's canonical encodings, which survive a decode and
    re-encode unchanged, so it cannot show that sampled tokens reach verl untouched:
    :class:`SamplingEngine` (test_verl_sampled_tokens.py) checks that.
    """

    def __init__(self, tokenizer: Any, *, wrong: bool = False, on_call: Any = None) -> None:
        super().__init__()
        self.tokenizer = tokenizer
        self.wrong = wrong
        self.on_call = on_call

    def answer(self, prompt_ids: list[int], params: dict[str, Any]) -> dict[str, Any]:
        if self.on_call is not None:
            self.on_call(len(self.calls))
        sign = SIGN.findall(self.tokenizer.decode(prompt_ids))[-1]
        if self.wrong:
            sign = "left" if sign == "right" else "right"
        end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        ids = [*self.tokenizer.encode(sign, add_special_tokens=False), end]
        logprobs = [-0.01 * (len(self.calls) + 1) - 0.1 * i for i in range(len(ids))]
        return {"token_ids": ids, "logprobs": logprobs}


class SamplingEngine(EngineDouble):
    """Stand-in for verl's server manager that samples from a real tiny model (``ModelSampler``).

    verl's engines (vLLM, SGLang) need a GPU. Like ``LLMServerClient.generate`` over
    ``vLLMHttpServer.generate``, this answers with the sampled ids and the logprob of each (only
    when ``sampling_params["logprobs"]``). It stops at the model's eos ids, as vLLM does from
    ``generation_config.json``. The ids are the model's samples, not a tokenizer's encoding of
    some text, so most turns change if decoded and re-encoded. Every call is recorded in
    ``calls`` (with why it ended, ``finish``) and in the sampler's ``samples``.
    """

    def __init__(self, sampler: ModelSampler, *, global_steps: int = 1) -> None:
        super().__init__(global_steps=global_steps)
        self.sampler = sampler

    def answer(self, prompt_ids: list[int], params: dict[str, Any]) -> dict[str, Any]:
        # The sampler draws from the whole distribution: settings that would narrow it must not pass unseen.
        if float(params.get("top_p", 1.0)) != 1.0 or int(params.get("top_k", -1)) not in (-1, 0):
            raise ValueError(f"SamplingEngine samples the whole vocabulary; top_p/top_k given: {params}")
        stops = sorted({*self.sampler.stops, *(params.get("stop_token_ids") or [])})
        if stops != self.sampler.stops:
            raise ValueError(f"SamplingEngine stops at {self.sampler.stops} only, the request asks for {stops}")
        if "max_tokens" not in params:
            raise ValueError("the adapter must set max_tokens on every request (the turn's token budget)")
        sample = self.sampler.sample(
            prompt_ids, int(params["max_tokens"]), temperature=float(params.get("temperature", 1.0))
        )
        logprobs = list(sample.logprobs) if params.get("logprobs") else None
        return {"token_ids": list(sample.token_ids), "logprobs": logprobs, "finish": sample.finish_reason}


def compose_verl(overrides: list[str]) -> Any:
    """verl's own ``ppo_trainer`` config with ``overrides``, as ``python -m verl.trainer.main_ppo`` composes it."""
    import verl.trainer.main_ppo as main_ppo
    from hydra import compose, initialize_config_dir

    config_dir = os.path.join(os.path.dirname(main_ppo.__file__), "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


PROMPT_LENGTH, RESPONSE_LENGTH = 256, 512


def small_run(tmp_path: Path, model: Path, url: str, **settings: Any) -> Any:
    """What ``prepare`` writes for a small run (4 ``trail`` tasks, 2 a step, rollout.n=2, one GPU) with
    ``settings`` over those: verl's launch (its command, agent-loop file and parquet)."""
    from agenthub_trainer_verl.config import VerlConfig
    from agenthub_trainer_verl.trainer import prepare

    defaults = {
        "env": "trail",
        "model": str(model),
        "url": url,
        "max_tasks": 4,
        "runs_dir": str(tmp_path / "runs"),
        "run_id": "test",
        "n": 2,
        "tasks_per_step": 2,
        "gpus_per_node": 1,
        "prompt_length": PROMPT_LENGTH,
        "response_length": RESPONSE_LENGTH,
    }
    _store, launch, _files = prepare(VerlConfig(**{**defaults, **settings}))
    return launch


def worker_for(launch: Any, engine: EngineDouble) -> tuple[Any, Any]:
    """verl's agent-loop worker over ``engine``, from the config ``launch`` composes, and its dataset."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.utils.dataset.rl_dataset import RLHFDataset

    verl_config = compose_verl(launch.command[3:])
    worker = AgentLoopWorker(verl_config, engine)
    dataset = RLHFDataset(data_files=[str(launch.train_file)], tokenizer=worker.tokenizer, config=verl_config.data)
    return worker, dataset


def make_worker(tmp_path: Path, model: Path, url: str, engine: EngineDouble, **settings: Any) -> tuple[Any, Any]:
    """verl's agent-loop worker and dataset for a small run (:func:`small_run`) that ``prepare`` wrote."""
    return worker_for(small_run(tmp_path, model, url, **settings), engine)
