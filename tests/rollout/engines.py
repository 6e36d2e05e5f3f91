"""Token-level policies for tests: real ``generate`` functions over a tokenizer built on the spot.

They stand in for an inference engine (vLLM, SGLang, a trainer's model), which
cannot run on this CPU machine; what they return has the engine's exact
shape: sampled token ids, one logprob per id, and a finish reason.
"""

from __future__ import annotations

import re
from typing import Any

from agenthub.rollout.policy import Generation, SamplingParams

_RANGE = re.compile(r"from (\d+) to (\d+)")
_FEEDBACK = re.compile(r"(-?\d+) is too (low|high)")


class GuessSearchEngine:
    """Plays ``guess`` by binary search over everything the env said in the prompt."""

    def __init__(self, tokenizer: Any, *, stop: bool = True) -> None:
        self.tokenizer = tokenizer
        self.stop = stop
        self.calls: list[list[int]] = []
        self.returned: list[Generation] = []

    def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        self.calls.append(list(prompt_ids))
        text = self.tokenizer.decode(prompt_ids)
        low, high = (int(x) for x in _RANGE.search(text).groups())  # type: ignore[union-attr]
        for number, direction in _FEEDBACK.findall(text):
            if direction == "low":
                low = max(low, int(number) + 1)
            else:
                high = min(high, int(number) - 1)
        ids = self.tokenizer.encode(f"guess {(low + high) // 2}", add_special_tokens=False)
        if self.stop:
            ids = [*ids, self.tokenizer.eos_token_id]
        ids = ids[: sampling.max_tokens]
        generation = Generation(
            token_ids=ids,
            logprobs=[-0.01 * (len(self.returned) + 1) * (k + 1) for k in range(len(ids))],
            finish_reason="stop" if self.stop and len(ids) and ids[-1] == self.tokenizer.eos_token_id else "length",
        )
        self.returned.append(generation)
        return generation
