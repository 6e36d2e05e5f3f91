"""A double of swift's vLLM engine that samples token ids from a real tiny model (swift's engine needs a GPU)."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthub.testing import EngineAnswer, ModelSampler, Sample

PreInferHook = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Generation:
    """What the double hands its sampler after the hook: the engine's ``SamplingParams``, in the parts it models."""

    max_tokens: int
    temperature: float
    stop_token_ids: tuple[int, ...]


@dataclass
class Asked:
    """One engine call: the request config as received, the context ids sampled from, the answer."""

    request_config: Any
    context: list[int]
    sample: Sample


@dataclass
class SamplingEngine:
    """Stands in for swift's vLLM engine (``GRPOVllmEngine``), which cannot run here: vLLM needs a GPU.

    It is no canned answerer: every turn is sampled token by token from a real
    tiny model (:class:`agenthub.testing.model_sampler.ModelSampler`), so most
    turns are id sequences the tokenizer would never produce from their text,
    and anything between the engine and the trainer that decodes and re-encodes
    them changes them. Token faithfulness is checked against this double; the
    canonical ``engines.StandInEngine`` only drives rewards and outcomes.

    It follows ``VllmEngine.infer_async`` step for step where the adapter
    depends on it: swift's template (``vllm`` mode) encodes the request, the
    request config becomes the sampling settings (``max_tokens``, default the
    context left; temperature, default 1; stop ids from the request's ``stop``,
    the template's stop words and eos, as ``_add_stop_words`` makes them), then
    ``pre_infer_hook`` may replace the inputs and the ids in
    ``kwargs["inputs"]["input_ids"]`` are what is sampled from. The answer is
    swift's own ``ChatCompletionResponse``: ``token_ids`` and
    ``prompt_token_ids`` only with ``return_details``, per-token logprobs only
    with ``logprobs`` (in ``_get_logprobs``' format), ``finish_reason`` "stop"
    (the stop id is kept in the ids, as vLLM keeps it) or "length", the text by
    ``template.decode_generate_ids``. ``infer`` is the batch call swift's
    colocate rollout makes. Sampling settings it does not model (top_p, top_k,
    min_p, repetition penalty, multi-token stop strings, n > 1) are refused
    rather than ignored. Every call is recorded in ``asked``.
    """

    model_dir: Path
    template: Any  # swift's Template for the model; the engine owns it (it switches it to vllm mode)
    seed: int = 0
    max_model_len: int = 4096
    asked: list[Asked] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tokenizer: Any = self.template.tokenizer
        self.stop_token_ids = self._stop_ids([])
        # One torch thread while sampling: a tiny model's forward passes are many times slower on more cores of a
        # busy machine (ModelSampler's default, said here because the tests' speed rests on it).
        self.sampler = ModelSampler(self.model_dir, stop_token_ids=self.stop_token_ids, seed=self.seed, threads=1)

    def _stop_ids(self, request_stop: Sequence[Any]) -> tuple[int, ...]:
        """``_add_stop_words``: single-token stop words become stop ids; vLLM also stops at eos."""
        ids: set[int] = {int(self.tokenizer.eos_token_id)}
        for word in [*request_stop, *self.template.template_meta.stop_words]:
            if word is None:
                continue
            encoded = self.tokenizer.encode(word, add_special_tokens=False) if isinstance(word, str) else word
            encoded = [encoded] if isinstance(encoded, int) else list(encoded)
            if len(encoded) != 1:
                if word in request_stop:
                    raise ValueError(f"the sampling engine double does not model multi-token stop strings: {word!r}")
                continue  # a template stop word vLLM only matches as text, after a stop id ends the turn anyway
            ids.add(int(encoded[0]))
        return tuple(sorted(ids))

    def _generation(self, request_config: Any, inputs: dict[str, Any]) -> Generation:
        unmodelled = {
            "n": (None, 1),
            "top_p": (None, 1, 1.0),
            "top_k": (None, -1, 0),
            "min_p": (None, 0, 0.0),
            "repetition_penalty": (None, 1, 1.0),
            "stream": (False,),
        }
        for key, neutral in unmodelled.items():
            value = getattr(request_config, key, None)
            if value not in neutral:
                raise ValueError(f"the sampling engine double samples the whole distribution; {key}={value!r}")
        stops = self._stop_ids(list(request_config.stop or []))
        if stops != self.stop_token_ids:
            raise ValueError(f"request stop ids {stops} differ from the sampler's {self.stop_token_ids}")
        max_tokens = request_config.max_tokens
        if max_tokens is None:  # set_default_max_tokens: what is left of the model's length
            max_tokens = self.max_model_len - len(inputs["input_ids"])
        temperature = 1.0 if request_config.temperature is None else float(request_config.temperature)
        return Generation(int(max_tokens), temperature, stops)

    def _answer(self, kwargs: dict[str, Any]) -> Any:
        from swift.infer_engine.protocol import (
            ChatCompletionResponse,
            ChatCompletionResponseChoice,
            ChatMessage,
            UsageInfo,
        )

        request_config, generation = kwargs["request_config"], kwargs["generation_config"]
        context = [int(t) for t in kwargs["inputs"]["input_ids"]]
        sample = self.sampler.sample(context, generation.max_tokens, temperature=generation.temperature)
        self.asked.append(Asked(copy.deepcopy(request_config), context, sample))
        ids = list(sample.token_ids)
        logprobs = None
        if request_config.logprobs:
            tokens = [self.tokenizer.decode(t) for t in ids]
            logprobs = {
                "content": [
                    {"token": token, "logprob": lp, "bytes": list(token.encode("utf8"))}
                    for token, lp in zip(tokens, sample.logprobs, strict=True)
                ]
            }
        details = bool(request_config.return_details)
        template_inputs = kwargs["inputs"].get("template_inputs")
        choice = ChatCompletionResponseChoice(
            index=0,
            message=ChatMessage(
                role="assistant", content=self.template.decode_generate_ids(ids, template_inputs=template_inputs)
            ),
            finish_reason=sample.finish_reason,
            logprobs=logprobs,
            token_ids=ids if details else None,
        )
        return ChatCompletionResponse(
            model=self.model_dir.name,
            choices=[choice],
            usage=UsageInfo(len(context), len(ids), len(context) + len(ids)),
            id=kwargs.get("request_id") or uuid.uuid4().hex,
            prompt_token_ids=context if details else None,
        )

    def _kwargs(self, infer_request: Any, request_config: Any) -> dict[str, Any]:
        request_config = copy.deepcopy(request_config)
        self.template.set_mode("vllm")
        inputs = self.template.encode(infer_request, True)
        kwargs: dict[str, Any] = {
            "inputs": inputs,
            "generation_config": self._generation(request_config, inputs),
            "adapter_request": None,
            "request_config": request_config,
        }
        if getattr(infer_request, "uuid", None):
            kwargs["request_id"] = infer_request.uuid
        return kwargs

    async def infer_async(
        self,
        infer_request: Any,
        request_config: Any = None,
        *,
        adapter_request: Any = None,
        pre_infer_hook: PreInferHook | None = None,
    ) -> Any:
        from swift.infer_engine.protocol import RequestConfig

        kwargs = self._kwargs(infer_request, request_config or RequestConfig())
        if pre_infer_hook is not None:
            kwargs = pre_infer_hook(kwargs)
        return self._answer(kwargs)

    def infer(
        self, infer_requests: list[Any], request_config: Any = None, metrics: Any = None, *, use_tqdm: Any = None
    ) -> list[Any]:
        """The batch call of swift's colocate rollout (``self.engine.infer(requests, request_config)``)."""
        from swift.infer_engine.protocol import RequestConfig

        return [self._answer(self._kwargs(r, request_config or RequestConfig())) for r in infer_requests]

    def answers(self) -> list[EngineAnswer]:
        """Every answer as the token-by-token check takes it: the context asked with, the ids, their logprobs."""
        return [EngineAnswer(a.context, list(a.sample.token_ids), list(a.sample.logprobs)) for a in self.asked]
