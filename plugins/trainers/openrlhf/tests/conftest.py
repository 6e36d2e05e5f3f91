"""Fixtures: a tiny local tokenizer, a real ``trail`` env server, and the stand-in vLLM engine.

``tests/shims`` (a test-only vLLM import shim, see its docstring) goes on
``sys.path`` so that OpenRLHF's own ``SamplesGenerator`` can be imported and
run around the agent; the agent module itself needs no shim.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import datetime
import importlib.util
import os
import random
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from agenthub import LocalServer
from agenthub.testing import build_tokenizer, env_server_fixture

SHIMS = Path(__file__).parent / "shims"
sys.path.insert(0, str(SHIMS))

REPLIES = ("left", "right", "go left", "r", "hmm", "right right right right")


@dataclass
class Logprob:
    """vLLM's ``Logprob``: what ``CompletionOutput.logprobs[i][token_id]`` holds."""

    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass(kw_only=True)
class CompletionOutput:
    """vLLM 0.29's ``CompletionOutput`` (the fields OpenRLHF and the agent read, with vLLM's names)."""

    index: int = 0
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None = None
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None = None
    stop_reason: int | str | None = None  # the stop token when a ``stop_token_ids`` entry ended the turn


@dataclass(kw_only=True)
class RequestOutput:
    """vLLM 0.29's ``RequestOutput`` for a token prompt (its text prompt is None)."""

    request_id: str = ""
    prompt: str | None = None
    prompt_token_ids: list[int] = field(default_factory=list)
    prompt_logprobs: None = None
    outputs: list[CompletionOutput]
    finished: bool = True


@dataclass
class EngineCall:
    """One ``generate`` call as the stand-in saw and answered it."""

    prompt_ids: list[int]
    max_tokens: int
    stop_token_ids: list[int]
    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str


@dataclass
class StandInEngine:
    """Stands in for OpenRLHF's vLLM engine actor (``RolloutRayActor.generate``), which needs a GPU.

    ``generate(prompt_token_ids, sampling_params)`` answers like vLLM: a reply
    drawn from ``REPLIES`` (seeded), tokenized, followed by the end-of-turn
    token, cut at ``sampling_params.max_tokens`` (then ``finish_reason`` is
    ``length``); a distinct logprob per sampled token when
    ``sampling_params.logprobs`` is set. ``fail_calls`` lists call numbers
    (from 0) that raise, as a crashed engine would. Every call is recorded.

    Its answers are the tokenizer's own encodings of words, which a decode and
    re-encode gives back unchanged, so it tests rewards, outcomes and spans,
    not token faithfulness: that is checked against sampled, mostly
    non-canonical ids by :class:`SampledVLLM` in ``test_openrlhf_sampled_tokens.py``.
    """

    tokenizer: Any
    seed: int = 0
    fail_calls: Sequence[int] = ()
    calls: list[EngineCall] = field(default_factory=list)
    attempts: int = 0

    async def generate(
        self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None
    ) -> RequestOutput:
        number = self.attempts
        self.attempts += 1
        if number in self.fail_calls:
            raise RuntimeError(f"stand-in engine: call {number} fails, as a crashed vLLM engine would")
        rng = random.Random(f"{self.seed}:{number}")
        end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        ids = [*self.tokenizer.encode(rng.choice(REPLIES), add_special_tokens=False), end]
        limit = sampling_params.max_tokens
        finish = "stop"
        if limit is not None and len(ids) > limit:
            ids, finish = ids[:limit], "length"
        values = [-round(0.05 + rng.random(), 4) for _ in ids]
        wanted = sampling_params.logprobs is not None
        stops = list(sampling_params.stop_token_ids or [])
        self.calls.append(EngineCall(list(prompt_token_ids), limit, stops, ids, values, finish))
        return RequestOutput(
            prompt_token_ids=list(prompt_token_ids),
            outputs=[
                CompletionOutput(
                    token_ids=ids,
                    text=self.tokenizer.decode(ids),
                    logprobs=[{t: Logprob(v), t + 1: Logprob(v - 1.0)} for t, v in zip(ids, values, strict=True)]
                    if wanted
                    else None,
                    finish_reason=finish,
                )
            ],
        )


@dataclass
class SampledCall:
    """One request as the sampling vLLM double saw and answered it."""

    prompt_ids: list[int]
    max_tokens: int
    min_tokens: int
    stop_token_ids: list[int]  # the request's own; the turn also ends at the model's eos, as in vLLM
    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str


class SampledVLLM:
    """Stands in for vLLM's ``AsyncLLMEngine`` (``RolloutRayActor.llm``), which needs a GPU; it samples a real model.

    OpenRLHF's own ``RolloutRayActor.generate`` (the ``llm_engine.generate``
    the agent calls) runs on top of it unchanged: see :func:`rollout_actor`.
    The tokens are sampled from the tiny local model at ``model_dir`` by
    :class:`~agenthub.testing.model_sampler.ModelSampler`, not taken from a
    tokenizer's encoding of some text, so most turns are id sequences that a
    decode and re-encode would change, as a real engine's often are.

    Like vLLM, ``generate(prompt, sampling_params, request_id)`` streams
    cumulative ``RequestOutput`` s, the last one ``finished``, and honours the
    request: at most ``max_tokens`` tokens; the turn ends at (and includes) a
    ``stop_token_ids`` entry or the model's eos, then ``finish_reason`` is
    ``stop`` (``stop_reason`` the stop id, None for eos), else ``length``;
    neither ends a turn before ``min_tokens`` tokens (they are masked from
    sampling, as vLLM's min-tokens processor does); the ``temperature``; and
    with ``logprobs`` set, a ``{sampled id: Logprob}`` dict per position. It
    does not give the top-k alternatives nor ranks (the adapter reads only the
    sampled token's), and samples the whole vocabulary (``top_p`` 1, ``top_k``
    -1, as OpenRLHF asks by default; others are refused). Every request is
    recorded in ``calls``.
    """

    def __init__(self, model_dir: Path, seed: int = 0) -> None:
        from transformers import AutoTokenizer, GenerationConfig

        self.model_dir = model_dir
        self.seed = seed
        self.calls: list[SampledCall] = []
        self.tokenizer: Any = AutoTokenizer.from_pretrained(model_dir)  # what ModelSampler loads too
        # vLLM ends a turn at the eos of the tokenizer and of generation_config.json as well as at stop_token_ids.
        eos = GenerationConfig.from_pretrained(model_dir).eos_token_id
        ids = [self.tokenizer.eos_token_id, *(eos if isinstance(eos, list) else [eos])]
        self.eos: set[int] = {int(t) for t in ids if t is not None}
        self._samplers: dict[tuple[tuple[int, ...], float], Any] = {}

    def _sampler(self, stops: tuple[int, ...], bias: float) -> Any:
        """A ModelSampler per stop set and bias (-inf masks the stops, for min_tokens); the model is tiny."""
        from agenthub.testing import ModelSampler

        key = (stops, bias)
        if key not in self._samplers:
            # Distinct seeded streams; which request gets which draw still follows how the concurrent episodes
            # interleave (the env server's timing), so the tests assert counts with a margin, not exact ids.
            seed = self.seed * 101 + len(self._samplers)
            self._samplers[key] = ModelSampler(self.model_dir, stop_token_ids=stops, stop_bias=bias, seed=seed)
        return self._samplers[key]

    def _sample(self, prompt_ids: list[int], params: Any) -> tuple[list[int], list[float], str]:
        if params.max_tokens is None or params.max_tokens < 1:
            raise ValueError(f"the sampling double needs max_tokens >= 1, got {params.max_tokens}")
        if params.top_p != 1.0 or params.top_k not in (-1, 0):
            raise ValueError(
                f"the sampling double samples the whole vocabulary; got top_p {params.top_p}, top_k {params.top_k}"
            )
        stops = tuple(sorted(self.eos | set(params.stop_token_ids or [])))
        ids: list[int] = []
        logprobs: list[float] = []
        masked = min(params.min_tokens, params.max_tokens)
        if masked:  # no stop token before min_tokens
            head = self._sampler(stops, float("-inf")).sample(prompt_ids, masked, temperature=params.temperature)
            ids, logprobs = list(head.token_ids), list(head.logprobs)
        finish = "length"
        if len(ids) < params.max_tokens:
            tail = self._sampler(stops, 4.0).sample(
                [*prompt_ids, *ids], params.max_tokens - len(ids), temperature=params.temperature
            )
            ids, logprobs, finish = [*ids, *tail.token_ids], [*logprobs, *tail.logprobs], tail.finish_reason
        return ids, logprobs, finish

    async def generate(self, prompt: Any, sampling_params: Any, request_id: str) -> AsyncIterator[RequestOutput]:
        prompt_ids = [int(t) for t in prompt["prompt_token_ids"]]  # vLLM's TokensPrompt
        ids, values, finish = self._sample(prompt_ids, sampling_params)
        stops = sorted(sampling_params.stop_token_ids or [])
        call = SampledCall(
            prompt_ids, sampling_params.max_tokens, sampling_params.min_tokens, stops, ids, values, finish
        )
        self.calls.append(call)
        wanted = sampling_params.logprobs is not None
        for n in range(1, len(ids) + 1):
            await asyncio.sleep(0)  # a step of the engine: other requests' episodes move on meanwhile
            done = n == len(ids)
            last = ids[n - 1]
            output = CompletionOutput(
                text=self.tokenizer.decode(ids[:n], skip_special_tokens=sampling_params.skip_special_tokens),
                token_ids=ids[:n],
                cumulative_logprob=sum(values[:n]) if wanted else None,
                logprobs=[
                    {t: Logprob(v, decoded_token=self.tokenizer.decode([t]))}
                    for t, v in zip(ids[:n], values[:n], strict=True)
                ]
                if wanted
                else None,
                finish_reason=finish if done else None,
                stop_reason=last if done and finish == "stop" and last not in self.eos else None,
            )
            yield RequestOutput(request_id=request_id, prompt_token_ids=prompt_ids, outputs=[output], finished=done)


def rollout_actor(llm: SampledVLLM, executor: Any) -> Any:
    """OpenRLHF's own ``RolloutRayActor`` over ``llm``, its ``generate``/``generate_responses`` as written.

    Made without its ``__init__``, which starts vLLM on a GPU; the fields its
    two methods read are set here as ``__init__`` sets them.
    """
    from openrlhf.trainer.ray.vllm_engine import RolloutRayActor

    actor = object.__new__(RolloutRayActor.__ray_actor_class__)  # the class under Ray's @ray.remote
    actor.llm, actor.executor, actor._mm_pad_token_ids = llm, executor, None
    return actor


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    return build_tokenizer("chatml")


trail_server = env_server_fixture("trail")


@pytest.fixture(scope="session")
def trail_url(trail_server: LocalServer) -> str:
    return trail_server.url


@pytest.fixture
def engine_class() -> type[StandInEngine]:
    """The stand-in engine class (test modules cannot import conftest by name under importlib mode)."""
    return StandInEngine


@pytest.fixture
def sampled_vllm() -> Iterator[tuple[type[SampledVLLM], Any]]:
    """``SampledVLLM`` and ``rollout_actor`` (test modules cannot import conftest by name under importlib mode).

    Torch samples on one thread meanwhile: a tiny model gains nothing from more, and on a busy machine torch's
    threads wait on each other (ten sampled turns took 20 s on 2 threads, 1.6 s on 1, at load 13 on 2 cores).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield SampledVLLM, rollout_actor
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random model directory with its tokenizer, built here (no download)."""
    from agenthub.testing import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


# -- OpenRLHF's own train_ppo_ray argument parser, without importing that module (it imports vLLM at the top).
# openrlhf/cli/train_ppo_ray.py builds its parser inside `if __name__ == "__main__":`; the statements before
# `args = parser.parse_args()` are run here as written, so flags are checked against exactly the names, types
# and choices OpenRLHF 0.11.2 accepts.


def train_ppo_ray_parser() -> argparse.ArgumentParser:
    spec = importlib.util.find_spec("openrlhf.cli.train_ppo_ray")
    assert spec is not None and spec.origin is not None
    with open(spec.origin, encoding="utf-8") as file:
        tree = ast.parse(file.read())
    main = next(n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))
    statements: list[ast.stmt] = []
    for statement in main.body:
        if isinstance(statement, ast.Assign) and "parse_args" in ast.unparse(statement.value):
            break
        statements.append(statement)
    namespace = {"argparse": argparse, "os": os, "datetime": datetime.datetime}
    exec(compile(ast.Module(body=statements, type_ignores=[]), spec.origin, "exec"), namespace)
    parser = namespace["parser"]
    assert isinstance(parser, argparse.ArgumentParser)
    return parser


def parse_train_args(argv: list[str]) -> dict[str, object]:
    """``argv`` (the flags after ``-m openrlhf.cli.train_ppo_ray``) as OpenRLHF parses them; exits on a bad one."""
    return vars(train_ppo_ray_parser().parse_args(argv))


@pytest.fixture
def openrlhf_parse() -> Any:
    """``parse_train_args``: flags as OpenRLHF's own parser reads them."""
    return parse_train_args
