"""``build_tiny_model(corpus=...)``: a tokenizer trained on an env's own text, from a file or a list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from agenthub.testing.tiny_model import build_tiny_model, read_corpus  # noqa: E402

OBSERVATION = "The goal is at position 8, 6. Your current position is at position 5, 6. There is a wall above you."


def chat_jsonl(path: Path) -> Path:
    """A small file as ``agenthub export sft`` writes it."""
    record = {
        "messages": [
            {"role": "system", "content": "You are walking through a maze to reach a goal."},
            {"role": "user", "content": OBSERVATION},
            {"role": "assistant", "content": "move down"},
        ],
        "env": "maze",
        "outcome": "success",
    }
    path.write_text("\n".join(json.dumps(record) for _ in range(20)) + "\n")
    return path


def tokens_of(model_dir: Path, text: str) -> list[str]:
    tokenizer: Any = transformers.AutoTokenizer.from_pretrained(model_dir)
    return [tokenizer.decode([i]) for i in tokenizer(text)["input_ids"]]


def test_a_chat_jsonl_corpus_gives_whole_words_where_the_built_in_one_gives_letters(tmp_path: Path) -> None:
    corpus = chat_jsonl(tmp_path / "sft.jsonl")
    default = tokens_of(build_tiny_model(tmp_path / "default"), OBSERVATION)
    trained = tokens_of(build_tiny_model(tmp_path / "maze", corpus=corpus), OBSERVATION)
    assert len(trained) < len(default) / 2, (trained, default)
    assert {" goal", " position", " current", " wall"} <= set(trained)
    assert "".join(trained) == OBSERVATION  # the same text, in fewer pieces
    assert tokens_of(build_tiny_model(tmp_path / "maze", corpus=corpus), "move down") == ["move", " down"]


def test_a_list_of_texts_and_a_plain_text_file_are_corpora_too(tmp_path: Path) -> None:
    from_list = tokens_of(build_tiny_model(tmp_path / "list", corpus=[OBSERVATION] * 10), OBSERVATION)
    text_file = tmp_path / "corpus.txt"
    text_file.write_text("\n".join([OBSERVATION] * 10))
    assert read_corpus(text_file) == [OBSERVATION] * 10
    from_file = tokens_of(build_tiny_model(tmp_path / "file", corpus=text_file), OBSERVATION)
    assert from_list == from_file and " position" in from_file


def test_read_corpus_takes_the_messages_of_chat_records_and_refuses_empty_or_missing_files(tmp_path: Path) -> None:
    assert read_corpus(chat_jsonl(tmp_path / "sft.jsonl"))[:3] == [
        "You are walking through a maze to reach a goal.",
        OBSERVATION,
        "move down",
    ]
    (tmp_path / "empty.txt").write_text("\n\n")
    with pytest.raises(ValueError, match="has no text"):
        read_corpus(tmp_path / "empty.txt")
    with pytest.raises(ValueError, match="is not a file"):
        build_tiny_model(tmp_path / "m", corpus=tmp_path / "missing.jsonl")
