"""Answer normalization, exact match and token F1, as in SQuAD's evaluation script and FlashRAG."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and the articles a/an/the, collapse whitespace (SQuAD's order)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, golden: Iterable[str]) -> float:
    """1.0 when the normalized prediction equals any normalized golden answer."""
    pred = normalize_answer(prediction)
    return 1.0 if any(pred == normalize_answer(g) for g in golden) else 0.0


def f1_score(prediction: str, golden: Iterable[str]) -> float:
    """The best token-level F1 of the prediction against the golden answers."""
    pred_tokens = normalize_answer(prediction).split()
    best = 0.0
    for answer in golden:
        gold_tokens = normalize_answer(answer).split()
        common = Counter(pred_tokens) & Counter(gold_tokens)
        overlap = sum(common.values())
        if overlap == 0:
            continue
        precision, recall = overlap / len(pred_tokens), overlap / len(gold_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best
