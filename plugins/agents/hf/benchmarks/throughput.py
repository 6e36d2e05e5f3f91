"""Generated tokens per second of ``HFGenerator``, batched against one request at a time.

    python plugins/agents/hf/benchmarks/throughput.py --requests 16 --max-batch 1 4 16

Builds a tiny random model (``agenthub.testing.tiny_model``) unless ``--model`` names a
directory, sends ``--requests`` concurrent greedy requests of ``--max-tokens`` tokens
(every row runs to the limit: stop tokens are switched off), and prints one JSON line
per ``max_batch``. Greedy decoding, so every setting generates the same ids.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import tempfile
import time
from pathlib import Path

import torch
import transformers
from agenthub.rollout import SamplingParams, render
from agenthub.testing import build_tiny_model

from agenthub_agent_hf import HFGenerator, load_model


async def run(generator: HFGenerator, prompts: list[list[int]], max_tokens: int) -> float:
    sampling = SamplingParams(temperature=0, max_tokens=max_tokens)
    started = time.perf_counter()
    await asyncio.gather(*(generator.generate(p, sampling) for p in prompts))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="a model directory; default: build a tiny one")
    parser.add_argument("--hidden-size", type=int, default=64, help="of the tiny model")
    parser.add_argument("--layers", type=int, default=2, help="of the tiny model")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--max-batch", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--repeats", type=int, default=3, help="best of")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.model or build_tiny_model(Path(scratch), hidden_size=args.hidden_size, layers=args.layers)
        loaded = load_model(path, device=args.device)
        tokenizer = loaded.tokenizer
        texts = [f"Game {i}. I am thinking of a number from 1 to {16 + 8 * i}. Guess it." for i in range(args.requests)]
        prompts = [render(tokenizer, [{"role": "user", "content": t}], add_generation_prompt=True) for t in texts]
        for max_batch in args.max_batch:
            generator = HFGenerator(
                loaded.model,
                stop_token_ids=[],
                pad_token_id=tokenizer.pad_token_id or 0,
                max_batch=max_batch,
                batch_wait_ms=5,
            )
            asyncio.run(run(generator, prompts[:2], 4))  # warm-up
            best = min(asyncio.run(run(generator, prompts, args.max_tokens)) for _ in range(args.repeats))
            tokens = args.requests * args.max_tokens
            print(
                json.dumps(
                    {
                        "model": str(args.model or f"tiny qwen2 hidden={args.hidden_size} layers={args.layers}"),
                        "device": args.device,
                        "threads": args.threads,
                        "requests": args.requests,
                        "max_tokens": args.max_tokens,
                        "max_batch": max_batch,
                        "seconds": round(best, 3),
                        "tokens_per_s": round(tokens / best, 1),
                        "torch": torch.__version__,
                        "transformers": transformers.__version__,
                        "cpu": platform.processor() or platform.machine(),
                    }
                ),
                flush=True,
            )
            generator.close()


if __name__ == "__main__":
    main()
