"""The canonical stand-in engine (swift's vLLM engine needs a GPU); ``sampling_engine`` is the sampling one."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

SIGN = re.compile(r"points (left|right)")


class StandInEngine:
    """Stands in for swift's vLLM engine (``GRPOVllmEngine``), which cannot run here: no GPU.

    ``infer_async`` answers with token ids like the real engine: it runs swift's
    ``pre_infer_hook`` on the encoded inputs, reads the context ids it is given,
    follows the last sign in them (so trail episodes succeed), and returns a
    real ``ChatCompletionResponse`` with the sampled ids, closed by the
    template's end-of-turn token, and made-up but distinct logprobs.
    Every call is recorded: ``calls`` holds (context ids, sampled ids, logprobs).

    Its answers are the tokenizer's own encoding of a word, which a decode and
    re-encode leaves unchanged, so it drives rewards, outcomes and masking only;
    token faithfulness is checked against ``sampling_engine.SamplingEngine``, which
    samples from a real tiny model (``test_swift_sampled_tokens.py``).
    """

    def __init__(self, tokenizer: Any, *, on_call: Callable[[int], None] | None = None) -> None:
        self.tokenizer = tokenizer
        self.end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.on_call = on_call
        self.calls: list[tuple[list[int], list[int], list[float]]] = []

    def sample(self, context: list[int], max_tokens: int) -> tuple[list[int], list[float]]:
        seen = SIGN.findall(self.tokenizer.decode(context, skip_special_tokens=True))
        ids = [*self.tokenizer.encode(seen[-1] if seen else "left", add_special_tokens=False), self.end][:max_tokens]
        n = len(self.calls)
        return ids, [round(-0.01 * (n + 1) - 0.1 * i, 4) for i in range(len(ids))]

    async def infer_async(self, infer_request: Any, request_config: Any, *, pre_infer_hook: Any = None) -> Any:
        from swift.infer_engine.protocol import ChatCompletionResponse

        kwargs: dict[str, Any] = {"inputs": {"input_ids": [0]}, "request_config": request_config}
        if pre_infer_hook is not None:
            kwargs = pre_infer_hook(kwargs)
        context = list(kwargs["inputs"]["input_ids"])
        if self.on_call is not None:
            self.on_call(len(self.calls))
        ids, logprobs = self.sample(context, request_config.max_tokens)
        self.calls.append((context, ids, logprobs))
        return self.response(ids, logprobs, ChatCompletionResponse)

    def response(self, ids: list[int], logprobs: list[float], cls: Any) -> Any:
        from swift.infer_engine.protocol import ChatCompletionResponseChoice, ChatMessage, UsageInfo

        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        choice = ChatCompletionResponseChoice(
            index=0,
            message=ChatMessage(role="assistant", content=text),
            finish_reason="stop",
            logprobs={"content": [{"token": str(t), "logprob": lp} for t, lp in zip(ids, logprobs, strict=True)]},
            token_ids=ids,
        )
        return cls(model="stand-in", choices=[choice], usage=UsageInfo(0, len(ids), len(ids)))
