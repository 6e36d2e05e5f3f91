"""One episode as the replay shows it: the stored trajectory plus what the page cannot work out itself.

The stored JSON is passed through as it is (the page shows what the run holds,
not a re-rendering), with ``index`` added and, where a token trace and a
tokenizer exist, the text of each token (``token_text``). Token ids are kept
either way, so the page can always fall back to showing ids.
"""

from __future__ import annotations

from typing import Any

from agenthub.viewer.tokens import TokenDecoder


def episode_payload(index: int, record: dict[str, Any], decoder: TokenDecoder | None) -> dict[str, Any]:
    payload = {"index": index, **record, "token_text": None, "tokenizer": None}
    tokens = record.get("tokens")
    if decoder is not None and isinstance(tokens, dict):
        payload["token_text"] = {
            "prompt": decoder.pieces(tokens.get("prompt_ids") or []),
            "response": decoder.pieces(tokens.get("response_ids") or []),
        }
        payload["tokenizer"] = decoder.path.name  # its name, not where it lies on the disk
    return payload
