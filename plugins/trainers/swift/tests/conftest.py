"""Shared fixtures: a tiny local model, its tokenizer, swift's template for it, a real ``trail`` server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MODELSCOPE_OFFLINE", "1")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agenthub.testing import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="session")
def tokenizer(tiny_model: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


@pytest.fixture(scope="session")
def swift_template(tiny_model: Path) -> Any:
    """swift's own ChatML template over the tiny model's tokenizer, in training mode (as GRPO encodes)."""
    from swift.model import get_processor
    from swift.template import get_template

    template = get_template(get_processor(str(tiny_model), model_type="qwen2"), template_type="chatml")
    template.set_mode("train")
    return template


@pytest.fixture
def trail_server() -> Iterator[Any]:
    from agenthub import LocalServer

    with LocalServer("trail") as server:
        yield server
