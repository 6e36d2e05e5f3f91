"""Token-in/token-out generation from the policy being trained, for the hub executor.

:class:`ModelGenerator` samples with ``transformers``' ``generate`` from the
trainer's live model (on a CPU, or a GPU without vLLM). The executor runs
many episodes at once and each asks for one turn at a time; the generator
queues those requests and samples every queued one in one padded batch, in a
worker thread, so env steps keep flowing while the model computes.

:class:`VLLMGenerator` does the same through TRL's vLLM engine
(``use_vllm=True``), whose weights TRL syncs before each rollout.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agenthub.rollout import Generation, SamplingParams


class NonFiniteScoresError(RuntimeError):
    """The policy's next-token scores hold NaN or +inf, or rule out every token: nothing can be sampled."""


def reject_non_finite_scores(input_ids: Any, scores: Any) -> Any:
    """A ``generate`` logits processor that stops before sampling from scores that cannot be sampled from.

    Without it, CUDA's sampler fails on a device-side assert that leaves the GPU unusable for the rest of the
    process, with a message that does not name the cause. Tokens ruled out (-inf, e.g. by top-p) are fine
    as long as one remains.
    """
    import torch

    unsampleable = scores.isnan().any(dim=-1) | scores.isposinf().any(dim=-1) | scores.isneginf().all(dim=-1)
    if bool(unsampleable.any()):
        rows = torch.nonzero(unsampleable).flatten().tolist()
        raise NonFiniteScoresError(
            f"the model's next-token scores are NaN, +inf or all -inf in {len(rows)} of {scores.shape[0]} "
            f"batch rows (e.g. row {rows[0]}), so no token can be sampled. The weights or activations overflowed: "
            "on a GPU, TRL trains in bf16 mixed precision by default, which a small model trained from scratch "
            "can overflow; set trl.bf16=false to train in float32, or lower learning_rate"
        )
    return scores


@dataclass
class _Request:
    prompt_ids: list[int]
    sampling: SamplingParams
    future: asyncio.Future[Generation]


def cut_at_stop(
    token_ids: Sequence[int], logprobs: Sequence[float] | None, stop_ids: set[int], limit: int
) -> Generation:
    """The sample up to and including its first stop token, at most ``limit`` tokens long."""
    ids = [int(t) for t in token_ids[:limit]]
    end, reason = len(ids), "length"
    for i, token in enumerate(ids):
        if token in stop_ids:
            end, reason = i + 1, "stop"
            break
    return Generation(ids[:end], None if logprobs is None else [float(x) for x in logprobs[:end]], reason)


class _Batcher(abc.ABC):
    """Queues concurrent ``generate`` calls and answers them a batch at a time."""

    def __init__(self, *, max_batch: int, gather_s: float) -> None:
        self.max_batch = max_batch
        self.gather_s = gather_s
        self._queue: list[_Request] = []
        self._worker: asyncio.Task[None] | None = None

    async def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        loop = asyncio.get_running_loop()
        request = _Request(list(prompt_ids), sampling, loop.create_future())
        self._queue.append(request)
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain(), name="agenthub-trl-generate")
        return await request.future

    async def _drain(self) -> None:
        await asyncio.sleep(self.gather_s)  # let the other episodes that are ready join this batch
        while self._queue:
            live = [r for r in self._queue if not r.future.done()]  # an episode that timed out is dropped
            batch, self._queue = live[: self.max_batch], live[self.max_batch :]
            groups: dict[tuple[float, float], list[_Request]] = {}
            for request in batch:
                groups.setdefault((request.sampling.temperature, request.sampling.top_p), []).append(request)
            for group in groups.values():
                try:
                    results = await asyncio.to_thread(self.sample, group)
                except Exception as exc:  # every waiting episode gets the error, as an agent failure
                    for request in group:
                        if not request.future.done():
                            request.future.set_exception(exc)
                    continue
                for request, result in zip(group, results, strict=True):
                    if not request.future.done():
                        request.future.set_result(result)

    @abc.abstractmethod
    def sample(self, requests: list[_Request]) -> list[Generation]:
        """Sample every request (same temperature and top_p); runs in a worker thread."""


class ModelGenerator(_Batcher):
    """A ``GenerateFn`` over a live ``transformers`` causal LM.

    ``model`` is called for each batch so that it always returns the weights
    being trained (e.g. ``lambda: accelerator.unwrap_model(trainer.model)``).
    Logprobs are those of the distribution sampled from (after temperature
    and top-p), aligned with the sampled tokens.
    """

    def __init__(
        self,
        model: Callable[[], Any],
        *,
        pad_token_id: int,
        stop_token_ids: Sequence[int],
        max_batch: int = 256,
        gather_s: float = 0.002,
    ) -> None:
        super().__init__(max_batch=max_batch, gather_s=gather_s)
        self.model = model
        self.pad_token_id = pad_token_id
        self.stop_token_ids = sorted({int(t) for t in stop_token_ids})
        if not self.stop_token_ids:
            raise ValueError("ModelGenerator needs at least one stop token id (the tokenizer's eos)")

    def sample(self, requests: list[_Request]) -> list[Generation]:
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        model = self.model()
        temperature, top_p = requests[0].sampling.temperature, requests[0].sampling.top_p
        max_new = max(r.sampling.max_tokens for r in requests)
        width = max(len(r.prompt_ids) for r in requests)
        rows = [[self.pad_token_id] * (width - len(r.prompt_ids)) + r.prompt_ids for r in requests]
        masks = [[0] * (width - len(r.prompt_ids)) + [1] * len(r.prompt_ids) for r in requests]
        sampled = temperature > 0
        settings: dict[str, Any] = {
            "max_new_tokens": max_new,
            "do_sample": sampled,
            "eos_token_id": self.stop_token_ids,
            "pad_token_id": self.pad_token_id,
            "return_dict_in_generate": True,
            "output_scores": True,
        }
        if sampled:  # top_k=0: sample from the whole distribution, as the trainer's logprobs assume
            settings.update(temperature=temperature, top_p=top_p, top_k=0)
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():  # grad mode is per thread: this is the worker's
                input_ids = torch.tensor(rows, dtype=torch.long, device=model.device)
                attention_mask = torch.tensor(masks, dtype=torch.long, device=model.device)
                out = model.generate(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    generation_config=GenerationConfig(**settings),
                    logits_processor=LogitsProcessorList([reject_non_finite_scores]),
                )
                new_tokens = out.sequences[:, width:]
                scores = torch.stack(out.scores, dim=1).float()  # (batch, new tokens, vocab), as sampled from
                logprobs = torch.log_softmax(scores, dim=-1).gather(-1, new_tokens.unsqueeze(-1)).squeeze(-1)
        finally:
            model.train(was_training)
        stops = set(self.stop_token_ids)
        return [
            cut_at_stop(new_tokens[i].tolist(), logprobs[i].tolist(), stops, r.sampling.max_tokens)
            for i, r in enumerate(requests)
        ]


def sampled_logprobs(
    completion_ids: Sequence[int],
    logprobs: Sequence[Sequence[float | None]] | None,
    token_ids: Sequence[Sequence[int]] | None,
) -> list[float] | None:
    """The logprob of each sampled token from vLLM's per-position candidates.

    None when vLLM left any of them out: the executor then records the turn
    without logprobs, as for an engine that reports none.
    """
    if logprobs is None:
        return None
    out = []
    for t, token in enumerate(completion_ids):
        candidates = list(logprobs[t])
        index = 0
        if token_ids is not None and token in token_ids[t]:
            index = list(token_ids[t]).index(token)
        value = candidates[index] if index < len(candidates) else None
        if value is None:
            return None
        out.append(float(value))
    return out


class VLLMGenerator(_Batcher):
    """A ``GenerateFn`` over TRL's vLLM engine (``trainer.vllm_generation``), colocated or a server.

    vLLM samples with the trainer's ``temperature``/``top_p`` and up to its
    ``max_completion_length`` tokens; a turn asking for fewer keeps a prefix
    of the sample, which is a sample of the shorter length. Its calls are
    collective across processes, so this generator supports one process.
    """

    def __init__(self, trainer: Any, *, stop_token_ids: Sequence[int], max_batch: int = 1024) -> None:
        super().__init__(max_batch=max_batch, gather_s=0.002)
        if trainer.accelerator.num_processes > 1:
            raise RuntimeError(
                "agenthub's TRL adapter with use_vllm=True runs one training process; its per-turn vLLM calls "
                "would need every process to call in step. Run one process, or use_vllm=false"
            )
        self.trainer = trainer
        self.stop_ids = {int(t) for t in stop_token_ids}

    def sample(self, requests: list[_Request]) -> list[Generation]:
        engine = self.trainer.vllm_generation
        _, completion_ids, logprobs, token_ids = engine.generate([r.prompt_ids for r in requests], None, 1)
        results = []
        for i, request in enumerate(requests):
            ids = list(completion_ids[i])
            values = sampled_logprobs(
                ids,
                logprobs[i] if logprobs is not None else None,
                token_ids[i] if token_ids is not None else None,
            )
            results.append(cut_at_stop(ids, values, self.stop_ids, request.sampling.max_tokens))
        return results
