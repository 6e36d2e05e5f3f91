"""Token-in/token-out generation through swift's own inference engine, for the hub executor.

swift's engines take chat messages, not token ids. ``infer_async`` accepts a
``pre_infer_hook`` that sees the encoded inputs just before they go to vLLM;
the hook puts the episode's exact context ids there, so the model conditions
on the tokens the executor assembled (sampled turns never decoded and
re-encoded) and the sampled ids and their logprobs come back unchanged.
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Sequence
from typing import Any

from agenthub.rollout import Generation, SamplingParams

REQUEST_CONFIG: contextvars.ContextVar[Any] = contextvars.ContextVar("agenthub_swift_request_config")
"""The trainer's ``RequestConfig`` for the episode being played (temperature, top_p, top_k, seed...)."""

# Swift renders this request only to fill the fields its engine expects; the hook replaces its ids.
_PLACEHOLDER_MESSAGES = [{"role": "user", "content": ""}]


def sampled_logprobs(choice: Any) -> list[float] | None:
    """The logprob of each sampled token in a swift ``ChatCompletionResponseChoice``; None when not reported."""
    logprobs = getattr(choice, "logprobs", None)
    if not logprobs or "content" not in logprobs:
        return None
    values = [item.get("logprob") for item in logprobs["content"]]
    if any(v is None for v in values):
        return None
    return [float(v) for v in values]


class SwiftEngineGenerate:
    """``generate(prompt_ids, sampling)`` over a swift engine with ``infer_async`` (vLLM, async engine).

    Sampling settings come from the trainer's ``RequestConfig`` of the current
    episode (:data:`REQUEST_CONFIG`); the per-turn token budget comes from the
    executor, which keeps the episode within its context.
    """

    def __init__(self, engine: Any) -> None:
        if not hasattr(engine, "infer_async"):
            raise TypeError(
                f"{type(engine).__name__} has no infer_async; the agenthub scheduler's run() needs swift's async "
                "vLLM engine (`swift rollout ... --vllm_use_async_engine true`)"
            )
        self.engine = engine

    def request_config(self, sampling: SamplingParams) -> Any:
        from swift.infer_engine.protocol import RequestConfig

        base = REQUEST_CONFIG.get(None) or RequestConfig(temperature=sampling.temperature, top_p=sampling.top_p)
        # swift's engines put the sampled ids in the response only with return_details; swift's own
        # RequestConfig defaults it to False, and without ids every sampled token would be lost.
        return dataclasses.replace(
            base,
            max_tokens=sampling.max_tokens,
            n=1,
            stream=False,
            logprobs=True,
            top_logprobs=None,
            return_details=True,
        )

    async def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        from swift.infer_engine.protocol import RolloutInferRequest

        context = [int(t) for t in prompt_ids]

        def feed_context(kwargs: dict[str, Any]) -> dict[str, Any]:
            kwargs["inputs"] = {**kwargs["inputs"], "input_ids": list(context)}
            return kwargs

        request = RolloutInferRequest(messages=[dict(m) for m in _PLACEHOLDER_MESSAGES])
        response = await self.engine.infer_async(request, self.request_config(sampling), pre_infer_hook=feed_context)
        choice = response.choices[0]
        if choice.token_ids is None:
            raise RuntimeError(
                f"{type(self.engine).__name__}.infer_async returned no token_ids although return_details was set; "
                "the agenthub scheduler trains on sampled ids and cannot recover them from text"
            )
        token_ids: Sequence[int] = choice.token_ids
        logprobs = sampled_logprobs(choice)
        if logprobs is not None and len(logprobs) != len(token_ids):
            logprobs = None  # misaligned: record the turn without logprobs rather than wrong ones
        return Generation([int(t) for t in token_ids], logprobs, str(choice.finish_reason or "stop"))
