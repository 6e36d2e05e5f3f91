"""A test double: a stand-in for AReaL's GPU inference engine that answers with token ids."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from areal.api.io_struct import ModelRequest, ModelResponse
from versioned_engine import VersionedEngine

_SIGN = re.compile(r"sign points (left|right)")


@dataclass
class EngineCall:
    """What the engine was asked and what it answered, for token-by-token checks."""

    rid: str
    input_ids: list[int]
    max_new_tokens: int
    stop_token_ids: list[int]
    output_tokens: list[int]
    output_logprobs: list[float]
    output_versions: list[int]


@dataclass
class StandInEngine(VersionedEngine):
    """A stand-in for AReaL's SGLang/vLLM engine, which needs a GPU and cannot run here.

    ``agenerate`` answers with token ids as the real engine does: it reads the
    last trail sign in the decoded context and replies with that direction
    (``follow=True``) or the opposite one, then the tokenizer's eos; logprobs
    are made-up but distinct per token, and every token is stamped with the
    engine's current weight version. ``on_call(engine, n)`` runs before the
    n-th call (1-based): tests use it to bump the version, kill an env server
    or stall. Every call is recorded in ``calls``.

    Its answers are the tokenizer's canonical encodings, which a decode and
    re-encode leaves unchanged, so it serves the reward, success, group and
    failure tests; token faithfulness is checked with
    ``sampling_engine.SamplingEngine``, which samples from a real tiny model, in
    ``test_areal_sampled_tokens.py``.
    """

    tokenizer: Any
    follow: bool = True
    version: int = 0
    on_call: Callable[[StandInEngine, ModelRequest], Any] | None = None
    calls: list[EngineCall] = field(default_factory=list)

    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        if self.on_call is not None:
            outcome = self.on_call(self, req)
            if asyncio.iscoroutine(outcome):
                await outcome
        signs = _SIGN.findall(self.tokenizer.decode(req.input_ids))
        direction = signs[-1] if signs else "left"
        if not self.follow:
            direction = "left" if direction == "right" else "right"
        tokens = [*self.tokenizer.encode(direction, add_special_tokens=False), self.tokenizer.eos_token_id]
        tokens = tokens[: req.gconfig.max_new_tokens]
        logprobs = [-0.01 * (len(self.calls) * 10 + i + 1) for i in range(len(tokens))]
        versions = [self.version] * len(tokens)
        self.calls.append(
            EngineCall(
                req.rid,
                list(req.input_ids),
                req.gconfig.max_new_tokens,
                list(req.gconfig.stop_token_ids),
                tokens,
                logprobs,
                versions,
            )
        )
        return ModelResponse(
            input_tokens=list(req.input_ids),
            output_tokens=tokens,
            output_logprobs=logprobs,
            output_versions=versions,
            stop_reason="stop" if tokens[-1] == self.tokenizer.eos_token_id else "length",
            tokenizer=req.tokenizer,
        )
