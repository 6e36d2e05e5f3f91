"""A second test double for AReaL's inference engine: it samples token ids from a real tiny model."""

from __future__ import annotations

from dataclasses import dataclass, field

from agenthub.testing import EngineAnswer, ModelSampler, is_canonical
from areal.api.io_struct import ModelRequest, ModelResponse
from versioned_engine import VersionedEngine


@dataclass
class SampledCall:
    """One ``agenerate``: what the engine was asked (the request's own fields) and what it answered."""

    rid: str
    input_ids: list[int]
    max_new_tokens: int
    stop_token_ids: list[int]
    stops: list[int]  # what could end the turn: the request's stop ids and the model's eos
    temperature: float
    response: ModelResponse


@dataclass
class SamplingEngine(VersionedEngine):
    """AReaL's SGLang/vLLM engine, which needs a GPU and cannot run here, played by a real tiny model.

    ``agenerate`` samples with :class:`agenthub.testing.model_sampler.ModelSampler`,
    so the ids are the model's own samples, mostly sequences the tokenizer would
    never produce from their text, where the canonical stand-in of
    ``standin_engine.py`` answers with encodings a decode/re-encode leaves
    unchanged. It does what ``RemoteInfEngine.agenerate`` does with a request:
    the turn's token budget is ``min(gconfig.max_tokens - len(input_ids),
    gconfig.max_new_tokens)`` (non-positive is an error), the turn ends at the
    first of ``gconfig.stop_token_ids`` or the model's eos (unless
    ``ignore_eos``), the stop id kept as SGLang returns it, no stop before
    ``gconfig.min_new_tokens``, sampled at ``gconfig.temperature``; the answer is AReaL's ``ModelResponse`` with
    ``input_tokens``, ``output_tokens``, per-token ``output_logprobs``, every
    token stamped with the current weight version in ``output_versions``, and
    ``stop_reason`` "stop" or "length". ``top_p``/``top_k`` are not applied (the
    sampler draws from the whole vocabulary): the tests leave them at AReaL's
    defaults, which apply no cut either. ``bump_version``: the weight version
    advances after every call, as if a training step landed between turns.
    """

    sampler: ModelSampler
    version: int = 0
    bump_version: bool = False
    calls: list[SampledCall] = field(default_factory=list)

    async def agenerate(self, req: ModelRequest) -> ModelResponse:
        gconfig = req.gconfig
        if gconfig.n_samples != 1:
            raise ValueError(f"agenerate takes n_samples=1 (as AReaL's engines do), got {gconfig.n_samples}")
        if gconfig.greedy or gconfig.top_p < 1.0 or gconfig.top_k < len(self.sampler.tokenizer):
            raise ValueError("SamplingEngine samples the whole vocabulary: greedy, top_p and top_k are not supported")
        max_new_tokens = min(gconfig.max_tokens - len(req.input_ids), gconfig.max_new_tokens)
        if max_new_tokens <= 0:
            raise RuntimeError(
                f"max_new_tokens ({max_new_tokens}) is non-positive! max_tokens={gconfig.max_tokens}, "
                f"prompt_len={len(req.input_ids)}, max_new_tokens={gconfig.max_new_tokens}."
            )
        # SGLang and vLLM stop at the model's eos besides the request's stop ids, unless told to ignore it.
        eos = [] if gconfig.ignore_eos else [self.sampler.tokenizer.eos_token_id]
        stops = sorted({*gconfig.stop_token_ids, *eos})
        sample = self.sampler.sample(
            list(req.input_ids),
            max_new_tokens,
            temperature=gconfig.temperature,
            stop_token_ids=stops,
            min_tokens=gconfig.min_new_tokens,
        )
        response = ModelResponse(
            input_tokens=list(req.input_ids),
            output_tokens=list(sample.token_ids),
            output_logprobs=list(sample.logprobs),
            output_versions=[self.version] * len(sample.token_ids),
            stop_reason=sample.finish_reason,
            tokenizer=req.tokenizer,
        )
        self.calls.append(
            SampledCall(
                req.rid,
                list(req.input_ids),
                max_new_tokens,
                list(gconfig.stop_token_ids),
                stops,
                gconfig.temperature,
                response,
            )
        )
        if self.bump_version:
            self.version += 1
        return response

    def answers(self) -> list[EngineAnswer]:
        """Every call as the token-by-token check takes it: the prompt sent, the ids and logprobs answered."""
        return [EngineAnswer(c.input_ids, c.response.output_tokens, c.response.output_logprobs) for c in self.calls]

    def non_canonical(self) -> list[SampledCall]:
        """The calls whose answer a decode and re-encode would change."""
        tokenizer = self.sampler.tokenizer
        return [c for c in self.calls if not is_canonical(tokenizer, c.response.output_tokens, c.stops)]
