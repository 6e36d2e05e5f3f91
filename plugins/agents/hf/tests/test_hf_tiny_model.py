"""``agenthub.testing.tiny_model``: a real, loadable, deterministic model directory built locally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from agenthub.rollout import render
from agenthub.testing import build_tiny_model, cpu_seconds_at_most
from transformers import AutoModelForCausalLM, AutoTokenizer

KINDS = [("qwen2", "chatml"), ("llama", "llama3")]


@pytest.mark.parametrize(("arch", "template"), KINDS, ids=[f"{a}-{t}" for a, t in KINDS])
def test_the_directory_loads_offline_as_a_causal_lm_with_a_chat_tokenizer(
    tmp_path: Path, arch: str, template: str
) -> None:
    path = build_tiny_model(tmp_path / "model", arch=arch, template=template)  # type: ignore[arg-type]
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    tokenizer: Any = AutoTokenizer.from_pretrained(path, local_files_only=True)
    assert model.config.model_type == arch
    assert model.get_input_embeddings().num_embeddings == len(tokenizer)
    assert model.config.eos_token_id == tokenizer.eos_token_id
    ids = render(tokenizer, [{"role": "user", "content": "guess 8"}], add_generation_prompt=True)
    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits
    assert logits.shape == (1, len(ids), len(tokenizer))
    assert tokenizer.decode(ids).endswith("assistant\n" if template == "chatml" else "assistant<|end_header_id|>\n\n")
    size = sum(f.stat().st_size for f in path.iterdir())
    assert size < 2_000_000, f"{size} bytes"


def test_the_generation_config_holds_no_sampling_defaults(tmp_path: Path) -> None:
    saved = json.loads((build_tiny_model(tmp_path) / "generation_config.json").read_text())
    assert set(saved) == {"bos_token_id", "eos_token_id", "pad_token_id", "transformers_version"}


def test_the_same_seed_gives_the_same_weights_and_the_callers_rng_is_left_alone(tmp_path: Path) -> None:
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    first = build_tiny_model(tmp_path / "a", seed=1)
    assert torch.equal(torch.rand(3), expected_next)
    again = build_tiny_model(tmp_path / "b", seed=1)
    other = build_tiny_model(tmp_path / "c", seed=2)
    weights = [(p / "model.safetensors").read_bytes() for p in (first, again, other)]
    assert weights[0] == weights[1]
    assert weights[0] != weights[2]


def test_building_is_fast_once_torch_and_transformers_are_imported(tmp_path: Path) -> None:
    build_tiny_model(tmp_path / "warm")  # the first call imports the Qwen2 modelling code
    with cpu_seconds_at_most(10.0, "building the tiny model"):  # CPU seconds over torch's threads: a loose bound
        build_tiny_model(tmp_path / "timed")


def test_bad_shapes_are_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown arch 'gpt2'; choose one of qwen2, llama"):
        build_tiny_model(tmp_path, arch="gpt2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"hidden_size \(60\) must be a multiple of heads \(8\)"):
        build_tiny_model(tmp_path, hidden_size=60, heads=8)
