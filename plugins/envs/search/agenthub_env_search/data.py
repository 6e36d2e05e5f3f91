"""Where the corpus and questions live: the generated default (cached per seed) or a user's FlashRAG files."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from agenthub_env_search import fictopedia

DEFAULT_SEED = 0


def cache_root() -> Path:
    """``$AGENTHUB_SEARCH_CACHE``, else ``$XDG_CACHE_HOME/agenthub-env-search``, else ``~/.cache/...``."""
    explicit = os.environ.get("AGENTHUB_SEARCH_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agenthub-env-search"


def default_dataset(seed: int = DEFAULT_SEED) -> Path:
    """The generated Fictopedia for ``seed``: made on first use (a few seconds), then reused."""
    target = cache_root() / f"fictopedia-v{fictopedia.GENERATOR_VERSION}-seed{seed}"
    if (target / "corpus.jsonl").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Written aside and renamed, so concurrent servers never read a half-written corpus.
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        fictopedia.write(fictopedia.generate(seed), tmp)
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "corpus.jsonl").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@lru_cache(maxsize=16)
def load_questions(path: str) -> tuple[dict[str, Any], ...]:
    """A FlashRAG QA file: one ``{"id", "question", "golden_answers"}`` object per line."""
    rows: list[dict[str, Any]] = []
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"QA file {path!r} does not exist; give qa=PATH to a FlashRAG-format JSONL file")
    with file.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("question"), str):
                raise ValueError(f"{path}:{number}: expected an object with a string 'question' (FlashRAG QA format)")
            golden = row.get("golden_answers")
            if not isinstance(golden, list) or not golden or not all(isinstance(g, str) for g in golden):
                raise ValueError(f"{path}:{number}: 'golden_answers' must be a non-empty list of strings")
            rows.append(row)
    if not rows:
        raise ValueError(f"QA file {path!r} holds no questions")
    return tuple(rows)
