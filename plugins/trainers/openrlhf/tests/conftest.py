"""Fixtures: a tiny local tokenizer, a real ``trail`` env server, and the stand-in vLLM engine.

``tests/shims`` (a test-only vLLM import shim, see its docstring) goes on
``sys.path`` so that OpenRLHF's own ``SamplesGenerator`` can be imported and
run around the agent; the agent module itself needs no shim.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import importlib.util
import os
import random
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from agenthub.service.launcher import LocalServer
from agenthub.testing.tiny_tokenizer import build_tokenizer

SHIMS = Path(__file__).parent / "shims"
sys.path.insert(0, str(SHIMS))

REPLIES = ("left", "right", "go left", "r", "hmm", "right right right right")


@dataclass
class Logprob:
    """vLLM's ``Logprob``: what ``CompletionOutput.logprobs[i][token_id]`` holds."""

    logprob: float


@dataclass
class CompletionOutput:
    token_ids: list[int]
    text: str
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str


@dataclass
class RequestOutput:
    outputs: list[CompletionOutput]


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
            [
                CompletionOutput(
                    token_ids=ids,
                    text=self.tokenizer.decode(ids),
                    logprobs=[{t: Logprob(v), t + 1: Logprob(v - 1.0)} for t, v in zip(ids, values, strict=True)]
                    if wanted
                    else None,
                    finish_reason=finish,
                )
            ]
        )


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    return build_tokenizer("chatml")


@pytest.fixture(scope="session")
def trail_url() -> Iterator[str]:
    with LocalServer("trail") as server:
        yield server.url


@pytest.fixture
def engine_class() -> type[StandInEngine]:
    """The stand-in engine class (test modules cannot import conftest by name under importlib mode)."""
    return StandInEngine


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random model directory with its tokenizer, built here (no download)."""
    from agenthub.testing.tiny_model import build_tiny_model

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
