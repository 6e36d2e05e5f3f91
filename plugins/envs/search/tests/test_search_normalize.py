"""SQuAD/FlashRAG answer normalization, exact match and F1 on hand-made cases."""

from __future__ import annotations

import pytest

from agenthub_env_search.normalize import exact_match, f1_score, normalize_answer


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("  an   apple, a pear!  ", "apple pear"),
        ("Korvath (Elmaria)", "korvath elmaria"),
        ("theater", "theater"),  # "the" only goes as a whole word
        ("U.S.A.", "usa"),
    ],
)
def test_normalize_answer(raw: str, normalized: str) -> None:
    assert normalize_answer(raw) == normalized


def test_exact_match_against_any_golden_answer() -> None:
    assert exact_match("the Beatles.", ["Rolling Stones", "Beatles"]) == 1.0
    assert exact_match("Beatles band", ["Beatles"]) == 0.0
    assert exact_match("", ["Beatles"]) == 0.0


def test_f1_is_token_overlap_and_takes_the_best_golden() -> None:
    assert f1_score("Ilsa Varn", ["Ilsa Varn"]) == 1.0
    # 1 common token of 2 predicted and 3 golden: p=1/2, r=1/3, f1=0.4
    assert f1_score("Ilsa Quist", ["Ilsa Varn Holloway"]) == pytest.approx(0.4)
    assert f1_score("Ilsa Quist", ["nobody", "Ilsa Varn Holloway", "Quist"]) == pytest.approx(2 / 3)
    assert f1_score("the", ["Korvath"]) == 0.0
