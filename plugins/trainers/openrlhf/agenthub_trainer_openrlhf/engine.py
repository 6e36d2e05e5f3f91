"""OpenRLHF's vLLM engine as the hub executor's token-in/token-out ``generate``.

OpenRLHF hands the agent executor ``llm_engine`` (its ``RolloutRayActor``),
whose ``generate(prompt_token_ids, sampling_params)`` runs vLLM on token ids
and returns vLLM's ``RequestOutput``. :class:`EngineGenerate` calls it once
per model turn with OpenRLHF's own vLLM ``SamplingParams`` (temperature,
top_p, logprobs, ...), capped at the turn's token budget, and hands back the
sampled ids and their logprobs as :class:`~agenthub.rollout.policy.Generation`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from agenthub.rollout import Generation, GenerationError, SamplingParams


def sampled_logprobs(token_ids: Sequence[int], logprobs: Sequence[Mapping[int, Any]] | None) -> list[float] | None:
    """The logprob of each sampled token, from vLLM's per-position ``{token_id: Logprob}`` dicts."""
    if logprobs is None:
        return None
    if len(logprobs) != len(token_ids):
        raise GenerationError(
            f"vLLM returned {len(token_ids)} tokens but {len(logprobs)} logprob positions; they must align"
        )
    values = []
    for position, (token, candidates) in enumerate(zip(token_ids, logprobs, strict=True)):
        entry = candidates.get(token)
        if entry is None:  # vLLM always reports the sampled token when logprobs >= 0 is asked for
            raise GenerationError(f"vLLM's logprobs at position {position} leave out the sampled token {token}")
        values.append(float(entry.logprob))
    return values


class EngineGenerate:
    """A ``GenerateFn`` over OpenRLHF's ``llm_engine`` for one episode.

    ``sampling_params`` is OpenRLHF's vLLM ``SamplingParams``; each call sends
    a copy with ``max_tokens`` set to the executor's budget for the turn.
    ``stop_token_ids`` (the chat template's end-of-turn token) are added to
    vLLM's own, so a turn ends where the template closes it even for a model
    whose generation config names another eos. ``finish_reasons`` records why
    each turn stopped, in order.
    """

    def __init__(self, llm_engine: Any, sampling_params: Any, stop_token_ids: Sequence[int] = ()) -> None:
        self.llm_engine = llm_engine
        self.sampling_params = sampling_params
        self.stop_token_ids = sorted({int(t) for t in stop_token_ids})
        self.finish_reasons: list[str] = []

    @property
    def wants_logprobs(self) -> bool:
        """OpenRLHF asks vLLM for logprobs only when its importance-sampling correction is on."""
        return getattr(self.sampling_params, "logprobs", None) is not None

    async def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        params = copy.deepcopy(self.sampling_params)
        params.max_tokens = sampling.max_tokens
        if self.stop_token_ids:
            params.stop_token_ids = sorted({*(getattr(params, "stop_token_ids", None) or []), *self.stop_token_ids})
        request_output = await self.llm_engine.generate(list(prompt_ids), params)
        output = request_output.outputs[0]
        token_ids = [int(t) for t in output.token_ids]
        finish_reason = str(output.finish_reason)
        self.finish_reasons.append(finish_reason)
        logprobs = sampled_logprobs(token_ids, output.logprobs) if self.wants_logprobs else None
        return Generation(token_ids, logprobs, finish_reason)
