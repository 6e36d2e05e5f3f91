"""A tiny causal language model built on the spot: for tests and the CPU demo, no download.

``build_tiny_model(directory)`` writes a directory that
``AutoModelForCausalLM.from_pretrained`` and ``AutoTokenizer.from_pretrained``
load offline, exactly like a real model's: ``config.json``,
``generation_config.json``, ``model.safetensors`` and the tokenizer files.

The recipe:

1. The tokenizer is :func:`agenthub.testing.tiny_tokenizer.build_tokenizer`
   (a byte-level BPE trained here, with a real chat template: ChatML as in
   Qwen2, or the Llama 3 header format).
2. The model is a Qwen2 (``arch="qwen2"``) or Llama (``arch="llama"``)
   decoder from its ``transformers`` config class, sized down: by default
   hidden size 64, 2 layers, 4 attention heads sharing 2 key/value heads
   (grouped-query attention, as in the real models), SwiGLU width 128, tied
   input and output embeddings, RoPE positions up to 4,096 tokens, and a
   vocabulary exactly as large as the tokenizer (``len(tokenizer)``, special
   tokens included). The special token ids (bos, eos, pad) are the tokenizer's.
3. The weights are random: the architecture's own initialiser, drawn from
   ``torch.manual_seed(seed)`` inside ``torch.random.fork_rng`` (so the
   caller's random state is untouched). The same seed gives the same weights,
   byte for byte, with the same torch version.
4. ``save_pretrained`` writes float32 safetensors (about 0.4 MB at the
   defaults) and the tokenizer next to them. ``generation_config.json`` holds
   only the special token ids: no sampling defaults that would silently
   change how the model samples.

Load the tokenizer back from the directory rather than calling
``build_tokenizer`` again: transformers 5 loads a ``qwen2`` directory's
tokenizer as ``Qwen2Tokenizer``, whose pre-tokenizer splits digits and
punctuation differently (same vocabulary and chat template, other token ids
for the same text). What the directory loads as is what the model is.

Its text is gibberish, but it has the real API, shapes, chat template and
numerics, which is what rollout and training code need to be tested against.
Building takes about 0.05-0.3 s once ``torch``, ``transformers`` and its
Qwen2/Llama modelling code are imported (the first call pays for those imports,
a few seconds on a slow CPU). They are imported inside the function, so
``agenthub`` itself never needs them.

Example::

    from agenthub.testing.tiny_model import build_tiny_model

    path = build_tiny_model(tmp_path / "tiny", template="chatml", seed=0)
    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from agenthub.testing.tiny_tokenizer import TemplateName, build_tokenizer

ArchName = Literal["qwen2", "llama"]
ARCHS: tuple[str, ...] = ("qwen2", "llama")


def build_tiny_model(
    directory: str | os.PathLike[str],
    *,
    template: TemplateName = "chatml",
    arch: ArchName = "qwen2",
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 4096,
    vocab_size: int = 512,
    initializer_range: float = 0.02,
    seed: int = 0,
    corpus: str | os.PathLike[str] | Sequence[str] | None = None,
) -> Path:
    """Build a tiny random causal LM and its tokenizer, save both in ``directory``, return its path.

    Args:
        directory: where to write the model; created if missing, files in it are overwritten.
        template: the tokenizer's chat template, ``"chatml"`` or ``"llama3"``.
        arch: ``"qwen2"`` (``Qwen2ForCausalLM``) or ``"llama"`` (``LlamaForCausalLM``).
        hidden_size: width of the residual stream; must be a multiple of ``heads``.
        layers: decoder layers.
        heads: attention heads; ``kv_heads`` must divide it.
        kv_heads: key/value heads (grouped-query attention).
        intermediate_size: width of the MLP; default ``2 * hidden_size``.
        max_position_embeddings: the longest context the config admits.
        vocab_size: the BPE vocabulary the tokenizer trains to; the model's
            vocabulary is the tokenizer's full length, special tokens included.
        initializer_range: standard deviation of the random weights.
        seed: seeds the weights; the same seed gives the same model.
        corpus: what the tokenizer is trained on instead of its built-in corpus: a file
            (:func:`read_corpus`: chat JSONL from ``agenthub export sft``, or plain text) or a
            list of texts. An env's own text then takes a few tokens a word instead of one a letter.
    """
    if arch not in ARCHS:
        raise ValueError(f"unknown arch {arch!r}; choose one of {', '.join(ARCHS)}")
    if hidden_size < 1 or layers < 1 or heads < 1 or kv_heads < 1:
        raise ValueError(
            f"hidden_size, layers, heads and kv_heads must be >= 1, got {hidden_size}, {layers}, {heads}, {kv_heads}"
        )
    if hidden_size % heads or heads % kv_heads:
        raise ValueError(
            f"hidden_size ({hidden_size}) must be a multiple of heads ({heads}), "
            f"and heads a multiple of kv_heads ({kv_heads})"
        )

    # Imported here, and typed as Any, so that agenthub imports and type-checks without them.
    torch: Any = importlib.import_module("torch")
    transformers: Any = importlib.import_module("transformers")
    hf_logging: Any = importlib.import_module("transformers.utils.logging")

    texts = read_corpus(corpus) if isinstance(corpus, (str, os.PathLike)) else corpus
    tokenizer = build_tokenizer(template, vocab_size=vocab_size, corpus=texts)
    special_ids = {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    settings: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": hidden_size,
        "intermediate_size": intermediate_size or 2 * hidden_size,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "max_position_embeddings": max_position_embeddings,
        "initializer_range": initializer_range,
        "tie_word_embeddings": True,
        **special_ids,
    }
    config_class = transformers.Qwen2Config if arch == "qwen2" else transformers.LlamaConfig
    config = config_class(**settings)

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.AutoModelForCausalLM.from_config(config)
    model = model.to(torch.float32).eval()
    # Only the token ids: a sampling default here would change every caller's sampling unseen.
    model.generation_config = transformers.GenerationConfig(**special_ids)

    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a progress bar for a 0.4 MB file is noise
    try:
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    return path


def read_corpus(path: str | os.PathLike[str]) -> list[str]:
    """The texts of a tokenizer corpus file.

    A line that is a chat record (``{"messages": [...]}``, as ``agenthub export sft`` writes)
    gives its messages' contents; any other non-empty line is a text of its own.
    """
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"tokenizer corpus {str(file)!r} is not a file")
    texts: list[str] = []
    for line in file.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("messages"), list):
            texts.extend(str(m["content"]) for m in record["messages"] if isinstance(m, dict) and "content" in m)
        else:
            texts.append(line)
    if not texts:
        raise ValueError(f"tokenizer corpus {str(file)!r} has no text")
    return texts
