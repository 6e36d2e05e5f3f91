"""Token text for the token view: the store keeps ids only, so a local tokenizer decodes them.

Where the tokenizer comes from, first found wins:

1. ``tokenizer=PATH`` given to ``agenthub view`` / ``report`` (a directory holding
   ``tokenizer.json`` or a Hugging Face tokenizer, or a ``tokenizer.json`` file);
2. the run's ``config.yaml``: a ``tokenizer``, ``model`` or ``model_path`` key naming a
   local directory that holds one;
3. a directory inside the run that holds one (the TRL trainer saves its tiny model and
   the final model there).

Nothing is ever downloaded: only existing local paths are tried, and
``transformers`` is asked with ``local_files_only=True``. ``tokenizers`` (light,
fast to import) is preferred; ``transformers`` is the fallback for tokenizers
saved without a ``tokenizer.json``. Neither is a core dependency: without them,
or without a tokenizer, the view shows ids.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agenthub.errors import ConfigError

CONFIG_KEYS = ("tokenizer", "model", "model_path")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


def _holds_tokenizer(path: Path) -> bool:
    return (path.is_file() and path.name == "tokenizer.json") or any((path / f).is_file() for f in TOKENIZER_FILES)


def find_tokenizer(run_dir: Path, config: Mapping[str, Any]) -> Path | None:
    """A local tokenizer the run points at or holds, or None (see the module docstring for the order)."""
    for key in CONFIG_KEYS:
        value = config.get(key)
        if isinstance(value, str) and value:
            for candidate in (Path(value), run_dir / value):
                if candidate.exists() and _holds_tokenizer(candidate):
                    return candidate
    inside = sorted(p for p in run_dir.iterdir() if p.is_dir() and _holds_tokenizer(p)) if run_dir.is_dir() else []
    return inside[0] if inside else None


class TokenDecoder:
    """Decodes ids one at a time (cached), so each token shows as its own piece of text."""

    def __init__(self, path: Path, decode_one: Callable[[int], str]) -> None:
        self.path = path
        self._decode_one = decode_one
        self._cache: dict[int, str] = {}

    def pieces(self, ids: Sequence[int]) -> list[str]:
        out = []
        for token in ids:
            text = self._cache.get(token)
            if text is None:
                text = self._cache[token] = self._decode_one(token)
            out.append(text)
        return out

    @classmethod
    def load(cls, path: str | Path) -> TokenDecoder:
        """Load a local tokenizer; ConfigError says what to do when it cannot be."""
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"tokenizer path {str(path)!r} does not exist; give a local tokenizer directory or file")
        file = path if path.is_file() else path / "tokenizer.json"
        if file.is_file() and importlib.util.find_spec("tokenizers") is not None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(file))
            return cls(path, lambda token: str(tokenizer.decode([token], skip_special_tokens=False)))
        if path.is_dir() and importlib.util.find_spec("transformers") is not None:
            from transformers import AutoTokenizer

            try:
                loaded = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"cannot load a tokenizer from {str(path)!r}: {exc}") from None
            return cls(path, lambda token: str(loaded.decode([token], skip_special_tokens=False)))
        raise ConfigError(
            f"cannot read the tokenizer at {str(path)!r}: it needs `pip install tokenizers` (for tokenizer.json) "
            "or `pip install transformers`; without tokenizer=, the viewer shows token ids"
        )


def decoder_for(run_dir: Path, config: Mapping[str, Any], explicit: str | Path | None) -> TokenDecoder | None:
    """The explicit tokenizer (errors are raised), else one found for the run (silently skipped if unreadable)."""
    if explicit is not None:
        return TokenDecoder.load(explicit)
    found = find_tokenizer(run_dir, config)
    if found is None:
        return None
    try:
        return TokenDecoder.load(found)
    except ConfigError:
        return None
