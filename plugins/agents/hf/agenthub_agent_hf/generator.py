"""Token-in/token-out generation with a local transformers model, batched across episodes.

Each episode awaits ``generate(prompt_ids, sampling)``. Requests that arrive
within ``batch_wait_ms`` of each other (up to ``max_batch``) are left-padded
into one ``model.generate`` call, run in a worker thread so that the event
loop keeps stepping environments meanwhile. Every request gets back exactly
the ids it sampled, cut after its first stop token or at its own
``max_tokens``, with one logprob per id.

Logprobs are computed on the fly by a logits processor, one step behind the
sampler (a token's id is known at the next step), so no per-step logits are
kept: memory stays at one ``batch x vocab`` tensor however long the turn.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import random
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from agenthub.rollout import Generation, GenerationError, SamplingParams
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

LogprobMode = Literal["raw", "processed"]
"""``raw``: log p(token) under the model's own distribution (softmax of the logits at temperature 1,
no top-k/top-p), what PPO/GRPO take as the old policy's logprobs. ``processed``: under the
distribution actually sampled from (temperature, top-k and top-p applied), like vLLM's
``logprobs_mode="processed_logprobs"``. The two agree at temperature 1 without truncation."""

SUPPORTED_SAMPLING = ("temperature", "top_p", "top_k", "max_tokens")


@dataclass
class BatchStats:
    """What the generator has done so far: how requests were batched, and how fast."""

    sizes: collections.Counter[int] = field(default_factory=collections.Counter)
    """Number of ``model.generate`` calls per batch size."""
    requests: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    """Time spent inside ``model.generate`` (the worker thread)."""

    @property
    def calls(self) -> int:
        return sum(self.sizes.values())

    @property
    def max_batch_size(self) -> int:
        return max(self.sizes, default=0)

    @property
    def tokens_per_second(self) -> float:
        return self.generated_tokens / self.seconds if self.seconds > 0 else 0.0


class _TokenLogprobs(LogitsProcessor):
    """Applies temperature, top-k and top-p itself, so that it sees the model's raw logits, and records
    each sampled token's logprob one step later, when the sampler has appended its id."""

    def __init__(self, *, greedy: bool, temperature: float, top_k: int, top_p: float, mode: LogprobMode) -> None:
        self.greedy = greedy
        self.temperature = temperature
        self.top_k = top_k
        self.top_p = top_p
        self.mode = mode
        self.steps: list[torch.Tensor] = []
        self.previous: torch.Tensor | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.previous is not None:
            self.steps.append(self.previous.gather(1, input_ids[:, -1:]).squeeze(1))
        if self.greedy:  # argmax of the raw logits; both modes report the raw distribution
            self.previous = torch.log_softmax(scores.float(), dim=-1)
            return scores
        warped = self._warp(scores.float())
        self.previous = torch.log_softmax(scores.float() if self.mode == "raw" else warped, dim=-1)
        return warped  # type: ignore[return-value]

    def _warp(self, scores: torch.Tensor) -> torch.Tensor:
        if self.temperature != 1.0:
            scores = scores / self.temperature
        if 0 < self.top_k < scores.shape[-1]:
            kth = torch.topk(scores, self.top_k, dim=-1).values[:, -1:]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        if self.top_p < 1.0:
            ordered, order = torch.sort(scores, dim=-1, descending=True)
            probs = ordered.softmax(dim=-1)
            # Drop a token once the tokens ranked above it already hold top_p of the mass; the top one stays.
            drop_sorted = (probs.cumsum(dim=-1) - probs) > self.top_p
            drop = torch.zeros_like(drop_sorted).scatter(1, order, drop_sorted)
            scores = scores.masked_fill(drop, float("-inf"))
        return scores

    def token_logprobs(self, new_ids: torch.Tensor) -> torch.Tensor:
        """``[batch, steps]`` logprobs of ``new_ids``, the ids generated after the prompt."""
        steps = new_ids.shape[1]
        if steps == 0:
            return torch.zeros((new_ids.shape[0], 0))
        found = list(self.steps[:steps])
        if len(found) < steps:  # the last token's logprob: its distribution is still in ``previous``
            assert self.previous is not None
            found.append(self.previous.gather(1, new_ids[:, steps - 1 : steps]).squeeze(1))
        return torch.stack(found, dim=1)


class _RowLimits(StoppingCriteria):
    """Ends each row at its own ``max_tokens`` (the batch runs to the largest)."""

    def __init__(self, prompt_width: int, limits: torch.Tensor) -> None:
        self.prompt_width = prompt_width
        self.limits = limits

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any) -> torch.BoolTensor:
        return (input_ids.shape[1] - self.prompt_width) >= self.limits  # type: ignore[return-value]


@dataclass
class _Request:
    prompt_ids: list[int]
    sampling: SamplingParams
    future: asyncio.Future[Generation]


class _LoopQueue:
    """Requests waiting to be batched, for one event loop."""

    def __init__(self) -> None:
        self.pending: list[_Request] = []
        self.full = asyncio.Event()
        self.dispatcher: asyncio.Task[None] | None = None


def _sampling_key(sampling: SamplingParams) -> tuple[Any, ...]:
    """Requests with the same key can share one ``model.generate`` call (max_tokens is per row)."""
    if sampling.temperature == 0:
        return ("greedy",)
    return ("sample", sampling.temperature, sampling.top_p, _top_k(sampling))


def _top_k(sampling: SamplingParams) -> int:
    value = (sampling.model_extra or {}).get("top_k", 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GenerationError(f"sampling top_k must be a whole number >= 0 (0 means off), got {value!r}")
    return value


class HFGenerator:
    """``generate(prompt_ids, sampling) -> Generation`` over a transformers causal LM.

    Greedy when ``sampling.temperature == 0``; otherwise samples with
    temperature, ``top_p`` and (as an extra sampling field) ``top_k``.
    ``seed`` makes sampling reproducible for the same sequence of batches:
    each ``model.generate`` call seeds torch's generator from ``(seed, call
    number)`` inside ``torch.random.fork_rng``, leaving the caller's random
    state as it was. Which requests share a batch depends on timing, so
    concurrent sampled episodes are reproducible only with ``max_batch=1``;
    greedy decoding gives the same ids batched or not.

    Example::

        generator = HFGenerator(model, stop_token_ids=[tokenizer.eos_token_id], pad_token_id=0)
        generation = await generator.generate(prompt_ids, SamplingParams(temperature=0, max_tokens=32))
    """

    def __init__(
        self,
        model: Any,
        *,
        stop_token_ids: Iterable[int],
        pad_token_id: int,
        max_batch: int = 16,
        batch_wait_ms: float = 10.0,
        seed: int | None = None,
        logprobs: LogprobMode = "raw",
        max_positions: int | None = None,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if batch_wait_ms < 0:
            raise ValueError(f"batch_wait_ms must be >= 0, got {batch_wait_ms}")
        if logprobs not in ("raw", "processed"):
            raise ValueError(f"logprobs must be 'raw' or 'processed', got {logprobs!r}")
        self.model = model
        self.stop_token_ids = tuple(dict.fromkeys(int(t) for t in stop_token_ids))
        self.pad_token_id = int(pad_token_id)
        self.max_batch = max_batch
        self.batch_wait_s = batch_wait_ms / 1000
        self.seed = seed
        self.logprobs: LogprobMode = logprobs
        self.max_positions = max_positions
        self.vocab_size = int(model.get_input_embeddings().num_embeddings)
        self.device = next(model.parameters()).device
        self.stats = BatchStats()
        self._stop_set = frozenset(self.stop_token_ids)
        self._calls = 0
        self._lock = threading.Lock()  # one model.generate at a time, also for direct generate_batch callers
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agenthub-hf-generate")
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopQueue] = weakref.WeakKeyDictionary()

    # -- the token-in/token-out hook ----------------------------------------------------

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        """Sample one turn for ``prompt_ids``; batched with whatever else is waiting."""
        self.check_request(prompt_ids, sampling)
        loop = asyncio.get_running_loop()
        request = _Request(list(prompt_ids), sampling, loop.create_future())
        queue = self._queues.get(loop)
        if queue is None:
            queue = self._queues[loop] = _LoopQueue()
        queue.pending.append(request)
        if len(queue.pending) >= self.max_batch:
            queue.full.set()
        if queue.dispatcher is None:
            queue.dispatcher = loop.create_task(self._dispatch(queue), name="agenthub-hf-batcher")
        return await request.future

    __call__ = generate

    def check_request(self, prompt_ids: Sequence[int], sampling: SamplingParams) -> None:
        """Raise :class:`GenerationError` for a request the model cannot serve, before it joins a batch."""
        if not prompt_ids:
            raise GenerationError("prompt_ids is empty; the model needs at least one token to condition on")
        low, high = min(prompt_ids), max(prompt_ids)
        if low < 0 or high >= self.vocab_size:
            bad = low if low < 0 else high
            raise GenerationError(
                f"prompt_ids hold token id {bad}, outside the model's vocabulary (0..{self.vocab_size - 1}); "
                "the tokenizer does not belong to this model"
            )
        unknown = sorted(set(sampling.model_dump()) - set(SUPPORTED_SAMPLING))
        if unknown:
            raise GenerationError(
                f"the hf generator does not implement sampling setting(s) {', '.join(unknown)}; "
                f"it supports {', '.join(SUPPORTED_SAMPLING)}"
            )
        _top_k(sampling)
        if self.max_positions is not None and len(prompt_ids) + sampling.max_tokens > self.max_positions:
            raise GenerationError(
                f"a prompt of {len(prompt_ids)} tokens plus max_tokens={sampling.max_tokens} passes the model's "
                f"max_position_embeddings={self.max_positions}; lower max_context or max_tokens"
            )

    async def _dispatch(self, queue: _LoopQueue) -> None:
        loop = asyncio.get_running_loop()
        try:
            while queue.pending:
                if len(queue.pending) < self.max_batch and self.batch_wait_s > 0:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(self.batch_wait_s):
                            await queue.full.wait()
                batch, queue.pending = queue.pending[: self.max_batch], queue.pending[self.max_batch :]
                if len(queue.pending) < self.max_batch:
                    queue.full.clear()
                groups: dict[tuple[Any, ...], list[_Request]] = {}
                for request in batch:
                    if not request.future.done():  # its episode was cancelled while waiting
                        groups.setdefault(_sampling_key(request.sampling), []).append(request)
                for group in groups.values():
                    await self._serve(loop, group)
        finally:
            queue.dispatcher = None
            for request in queue.pending:  # only left over when this task was cancelled
                request.future.cancel()
            queue.pending.clear()

    async def _serve(self, loop: asyncio.AbstractEventLoop, group: list[_Request]) -> None:
        prompts = [r.prompt_ids for r in group]
        limits = [r.sampling.max_tokens for r in group]
        try:
            results = await loop.run_in_executor(
                self._executor, self.generate_batch, prompts, group[0].sampling, limits
            )
        except Exception as exc:
            for request in group:
                if not request.future.done():
                    request.future.set_exception(exc)
            return
        for request, result in zip(group, results, strict=True):
            if not request.future.done():
                request.future.set_result(result)

    # -- one batch, synchronously ---------------------------------------------------------

    def generate_batch(
        self,
        prompts: Sequence[Sequence[int]],
        sampling: SamplingParams,
        max_tokens: Sequence[int] | None = None,
    ) -> list[Generation]:
        """Generate for ``prompts`` in one left-padded ``model.generate`` call (blocking).

        ``max_tokens`` gives each row its own limit (default: ``sampling.max_tokens``).
        """
        if not prompts:
            return []
        limits = list(max_tokens) if max_tokens is not None else [sampling.max_tokens] * len(prompts)
        if len(limits) != len(prompts) or min(limits) < 1:
            raise GenerationError(f"max_tokens needs one value >= 1 per prompt, got {limits} for {len(prompts)}")
        for prompt, limit in zip(prompts, limits, strict=True):
            self.check_request(prompt, sampling.model_copy(update={"max_tokens": limit}))
        greedy = sampling.temperature == 0
        processor = _TokenLogprobs(
            greedy=greedy,
            temperature=sampling.temperature,
            top_k=_top_k(sampling),
            top_p=sampling.top_p,
            mode=self.logprobs,
        )
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            input_ids[row, width - len(prompt) :] = torch.tensor(list(prompt), dtype=torch.long)
            attention_mask[row, width - len(prompt) :] = 1
        config = self._generation_config(greedy, max(limits))
        criteria = StoppingCriteriaList()
        if min(limits) < max(limits):
            criteria.append(_RowLimits(width, torch.tensor(limits, device=self.device)))
        with self._lock, torch.inference_mode(), self._seeded():
            started = time.perf_counter()
            sequences = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=attention_mask.to(self.device),
                generation_config=config,
                logits_processor=LogitsProcessorList([processor]),
                stopping_criteria=criteria,
            )
            new_ids = sequences[:, width:]
            logprobs = processor.token_logprobs(new_ids).tolist()
            ids = new_ids.tolist()
            elapsed = time.perf_counter() - started
        results = [self._cut(*row) for row in zip(ids, logprobs, limits, strict=True)]
        self.stats.sizes[len(prompts)] += 1
        self.stats.requests += len(prompts)
        self.stats.generated_tokens += sum(len(r.token_ids) for r in results)
        self.stats.seconds += elapsed
        return results

    def _generation_config(self, greedy: bool, max_new_tokens: int) -> Any:
        settings: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "pad_token_id": self.pad_token_id,
            "eos_token_id": list(self.stop_token_ids) or None,
            "do_sample": not greedy,
        }
        if not greedy:
            # Neutral: _TokenLogprobs applies the caller's temperature/top-k/top-p on the raw logits.
            settings.update(temperature=1.0, top_p=1.0, top_k=0)
        return GenerationConfig(**settings)  # type: ignore[no-untyped-call]

    def _cut(self, ids: list[int], logprobs: list[float], limit: int) -> Generation:
        """The row's sampled ids up to and including its first stop token, within its limit."""
        ids = ids[:limit]
        for index, token in enumerate(ids):
            if token in self._stop_set:
                return Generation(ids[: index + 1], logprobs[: index + 1], "stop")
        return Generation(ids, logprobs[: len(ids)], "length")

    @contextlib.contextmanager
    def _seeded(self) -> Iterator[None]:
        self._calls += 1
        if self.seed is None:
            yield
            return
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(random.Random(f"{self.seed}:{self._calls}").getrandbits(63))
            yield

    def close(self) -> None:
        """Stop the worker thread once the batch it runs (if any) is done."""
        self._executor.shutdown(wait=False, cancel_futures=True)
