"""A test-only import shim for vLLM, which cannot be installed without CUDA.

It holds only the names OpenRLHF 0.11.2's ``samples_generator`` and
``trainer/ray/vllm_engine`` import at module level, so that the tests can run
OpenRLHF's real rollout code (``SamplesGenerator``) around the agent. Nothing
here generates: generation is the tests' stand-in engine. ``SamplingParams``
keeps the fields OpenRLHF sets, with vLLM 0.29's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__version__ = "0.29.0"


@dataclass
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    max_tokens: int | None = 16
    min_tokens: int = 0
    skip_special_tokens: bool = True
    logprobs: int | None = None
    stop_token_ids: list[int] | None = None


class _NeedsVLLM:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("this is the tests' vLLM import shim; a real engine needs `pip install vllm` and a GPU")


class AsyncEngineArgs(_NeedsVLLM):
    pass


class AsyncLLMEngine(_NeedsVLLM):
    pass
