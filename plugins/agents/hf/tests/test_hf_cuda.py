"""The generator on a CUDA GPU: the same contract as on the CPU. Skipped where torch sees no GPU."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from agenthub.rollout import SamplingParams, render

from agenthub_agent_hf import HFGenerator, load_model

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA GPU")
TEXTS = ["hi", "I am thinking of a whole number from 1 to 16.", "craft the red key", "guess 8"]


@pytest.mark.parametrize(("dtype", "tolerance"), [("float32", 1e-3), ("bfloat16", None)])
def test_cuda_generation_keeps_the_contract(model_dir: Path, dtype: str, tolerance: float | None) -> None:
    loaded = load_model(model_dir, device="cuda", dtype=dtype)  # type: ignore[arg-type]
    assert loaded.device.type == "cuda"
    tokenizer = loaded.tokenizer
    prompts = [render(tokenizer, [{"role": "user", "content": t}], add_generation_prompt=True) for t in TEXTS]
    engine = HFGenerator(
        loaded.model, stop_token_ids=[tokenizer.eos_token_id], pad_token_id=tokenizer.pad_token_id, seed=0
    )
    greedy = SamplingParams(temperature=0, max_tokens=16)
    limits = [16, 5, 16, 9]
    batched = engine.generate_batch(prompts, greedy, limits)
    for generation, limit in zip(batched, limits, strict=True):
        stopped = generation.finish_reason == "stop"
        assert len(generation.token_ids) == limit or (stopped and len(generation.token_ids) < limit)
    for prompt, generation in zip(prompts, batched, strict=True):
        assert generation.logprobs is not None and all(math.isfinite(x) and x <= 0 for x in generation.logprobs)
        if tolerance is None:  # bfloat16: rounding may flip a near tie, so only the shape of the answer is checked
            continue
        alone = engine.generate_batch([prompt], greedy.model_copy(update={"max_tokens": len(generation.token_ids)}))
        assert alone[0].token_ids == generation.token_ids
        ids = torch.tensor([prompt + generation.token_ids], device=loaded.device)
        with torch.inference_mode():
            logits = loaded.model(ids).logits[0].float()
        fresh = torch.log_softmax(logits[len(prompt) - 1 : -1], dim=-1)
        expected = fresh.gather(1, torch.tensor(generation.token_ids, device=loaded.device)[:, None]).squeeze(1)
        assert max(abs(a - b) for a, b in zip(expected.tolist(), generation.logprobs, strict=True)) < tolerance
    sampled = engine.generate_batch(prompts, SamplingParams(temperature=1.0, top_p=0.9, max_tokens=8))
    assert all(1 <= len(g.token_ids) <= 8 for g in sampled)
