"""A real vLLM server (CPU build) serving the tiny random model, for token-faithfulness tests.

These tests need vLLM, which has its own virtualenv (``tests/vllm/README.md``): the root test run
(``requirements-dev.txt``, no vLLM) skips them. ``AGENTHUB_REQUIRE_VLLM_TESTS=1`` (set by
``.ci/run``'s vLLM job) turns that skip into an error, so that job cannot pass by skipping.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenthub.testing.tiny_model import build_tiny_model
from agenthub.testing.vllm_server import TINY_MODEL_SHAPE, VLLMServer

HERE = Path(__file__).parent
HAVE_VLLM = importlib.util.find_spec("vllm") is not None
SKIP_REASON = "vLLM is not installed here; its tests run in their own virtualenv (tests/vllm/README.md)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAVE_VLLM:
        return
    ours = [item for item in items if HERE in Path(str(item.path)).parents]
    if ours and os.environ.get("AGENTHUB_REQUIRE_VLLM_TESTS") == "1":
        raise pytest.UsageError(f"AGENTHUB_REQUIRE_VLLM_TESTS=1 but {SKIP_REASON}")
    for item in ours:
        item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny model with the chatml and the qwen3 template: same seed and vocabulary, so the same weights."""
    root = tmp_path_factory.mktemp("models")
    return {t: build_tiny_model(root / t, template=t, seed=0, **TINY_MODEL_SHAPE) for t in ("chatml", "qwen3")}


@pytest.fixture(scope="session")
def vllm_server(tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    """vLLM serving the chatml tiny model on a free loopback port, for the whole session (it takes a minute
    to start); its log is printed if it fails to start."""
    if not HAVE_VLLM:
        pytest.skip(SKIP_REASON)
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    server = VLLMServer(tiny_models["chatml"], max_model_len=2048, kv_cache_gib=1, log=log)
    with server:
        yield server
    keep = os.environ.get("AGENTHUB_VLLM_LOG")
    if keep:  # CI keeps the server's log beside its own
        Path(keep).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(log, keep)


@pytest.fixture(scope="session")
def tokenizers(tiny_models: dict[str, Path]) -> dict[str, Any]:
    from transformers import AutoTokenizer

    return {t: AutoTokenizer.from_pretrained(path) for t, path in tiny_models.items()}
