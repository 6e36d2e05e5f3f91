"""An engine double that samples from a real model: for adapters whose real engine needs a GPU.

verl's server manager, AReaL's ``agenerate``, OpenRLHF's vLLM actor and swift's
vLLM engine only run on a GPU. Their tests drive each adapter through that
framework's engine interface with a stand-in, and a stand-in that answers with a
tokenizer's canonical encoding of a word cannot notice re-tokenisation: decoding
and re-encoding a canonical sequence gives it back unchanged. :class:`ModelSampler`
samples token ids from a tiny local model (``agenthub.testing.tiny_model``), as a
real engine does, so the sequences it returns are the model's, not the
tokenizer's: with random weights most turns are sequences whose re-encoding
differs (:func:`is_canonical` tells), and an adapter that re-encodes fails a
token-by-token check. Each framework's test wraps :meth:`ModelSampler.sample` in
that framework's own request and response types.

``stop_bias`` raises the logits of the stop tokens before sampling (as an
engine's ``logit_bias`` does) so that turns end on their own after a few tokens
as well as at ``max_tokens``; the logprobs returned are those of the
distribution sampled from. Sampling is seeded per call, so a test run is
reproducible. Needs ``torch`` and ``transformers``.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Sample:
    """One sampled turn: the ids, the logprob of each under the distribution sampled from, why it ended."""

    prompt_ids: list[int]
    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str  # "stop" (ended on a stop token, which is included) or "length"
    stop_token_ids: tuple[int, ...] = ()  # what could end it


@dataclass
class ModelSampler:
    """Samples turns from the causal LM saved at ``model_dir`` (temperature 1, whole vocabulary).

    Args:
        model_dir: a model directory with its tokenizer (``build_tiny_model``).
        stop_token_ids: ids that end a turn; default the tokenizer's eos.
        stop_bias: added to the stop tokens' logits (0 leaves the model's own distribution).
        seed: with the call number, seeds each call's sampling.
        threads: torch threads while sampling (restored after). One is fastest for a tiny model on a busy
            machine: two threads contending with other work made each token about 15x slower.

    Every call is appended to ``samples``; it is safe to call from several threads.
    """

    model_dir: str | os.PathLike[str]
    stop_token_ids: Sequence[int] | None = None
    stop_bias: float = 4.0
    seed: int = 0
    threads: int | None = 1
    samples: list[Sample] = field(default_factory=list)

    def __post_init__(self) -> None:
        transformers: Any = importlib.import_module("transformers")
        self._torch: Any = importlib.import_module("torch")
        self.tokenizer: Any = transformers.AutoTokenizer.from_pretrained(str(self.model_dir))
        self.model: Any = transformers.AutoModelForCausalLM.from_pretrained(str(self.model_dir)).eval()
        stops = self.stop_token_ids if self.stop_token_ids is not None else [self.tokenizer.eos_token_id]
        self.stops = sorted({int(t) for t in stops})
        if not self.stops:
            raise ValueError("ModelSampler needs at least one stop token id; pass stop_token_ids")
        self._lock = threading.Lock()
        self._calls = 0

    def sample(
        self,
        prompt_ids: Sequence[int],
        max_tokens: int,
        *,
        temperature: float = 1.0,
        stop_token_ids: Sequence[int] | None = None,
        min_tokens: int = 0,
    ) -> Sample:
        """Sample one turn after ``prompt_ids``: at most ``max_tokens`` ids, ending at the first stop id.

        ``stop_token_ids`` replaces the sampler's stop ids for this call (an engine request's own stop ids);
        ``min_tokens`` keeps stop ids from being sampled before that many tokens (vLLM's ``min_tokens``).
        """
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if temperature <= 0:
            raise ValueError(f"ModelSampler samples: temperature must be > 0, got {temperature}")
        torch = self._torch
        with self._lock:
            call = self._calls
            self._calls += 1
            generator = torch.Generator().manual_seed(self.seed * 1_000_003 + call)
            previous_threads = torch.get_num_threads()
            if self.threads is not None:
                torch.set_num_threads(self.threads)
            try:
                stops = self.stops if stop_token_ids is None else sorted({int(t) for t in stop_token_ids})
                ids, logprobs, reason = self._sample(
                    list(prompt_ids), max_tokens, temperature, generator, stops, min_tokens
                )
            finally:
                torch.set_num_threads(previous_threads)
            result = Sample(list(prompt_ids), ids, logprobs, reason, tuple(stops))
            self.samples.append(result)
            return result

    def _sample(
        self,
        context: list[int],
        max_tokens: int,
        temperature: float,
        generator: Any,
        stops: list[int],
        min_tokens: int,
    ) -> tuple[list[int], list[float], str]:
        torch = self._torch
        ids: list[int] = []
        logprobs: list[float] = []
        with torch.no_grad():
            for position in range(max_tokens):
                # The whole context each token, no KV cache: the cache's keyword differs across the
                # transformers versions the trainer venvs pin, and a tiny model makes this cheap.
                out = self.model(input_ids=torch.tensor([context], dtype=torch.long), use_cache=False)
                logits = out.logits[0, -1].float() / temperature
                if stops:
                    logits[stops] += self.stop_bias
                    if position < min_tokens:
                        logits[stops] = float("-inf")
                distribution = torch.log_softmax(logits, dim=-1)
                token = int(torch.multinomial(distribution.exp(), 1, generator=generator))
                ids.append(token)
                logprobs.append(round(float(distribution[token]), 6))
                if token in stops:
                    return ids, logprobs, "stop"
                context.append(token)
        return ids, logprobs, "length"

    def non_canonical(self) -> list[Sample]:
        """The samples so far whose ids (stop token aside) are not what the tokenizer makes of their text."""
        return [s for s in self.samples if not is_canonical(self.tokenizer, s.token_ids, s.stop_token_ids)]


def is_canonical(tokenizer: Any, token_ids: Sequence[int], stop_token_ids: Sequence[int] = ()) -> bool:
    """Whether decoding ``token_ids`` (a trailing stop id aside) and encoding the text gives them back."""
    ids = list(token_ids)
    if ids and ids[-1] in set(stop_token_ids):
        ids = ids[:-1]
    return bool(tokenizer.encode(tokenizer.decode(ids), add_special_tokens=False) == ids)
