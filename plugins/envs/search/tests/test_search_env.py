"""The env in-process over a user's FlashRAG corpus and QA file: actions, rewards, info, limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenthub_env_search.env import INVALID, SearchEnv, parse_action


@pytest.mark.parametrize(
    ("action", "parsed"),
    [
        ("<think>hm</think>\n<search> Ilsa Varn </search>", ("search", "Ilsa Varn")),
        ("<answer>Korvath</answer> <search>x</search>", ("answer", "Korvath")),
        ("<search></search>", ("search", "")),  # Search-R1 searches for the empty query
        ("<SEARCH>Korvath</SEARCH>", None),
        ("I think.\nsearch: Korvath (Elmaria)", None),
        ("Answer: Korvath", None),
        ("stray </search> <answer>Korvath</answer>", None),  # Search-R1 cuts the reply at the first </search>
        ("just text", None),
    ],
)
def test_parse_action_as_search_r1(action: str, parsed: tuple[str, str] | None) -> None:
    assert parse_action(action) == parsed


@pytest.mark.parametrize(
    ("action", "parsed"),
    [
        ("<SEARCH>Korvath</SEARCH>", ("search", "Korvath")),
        ("I think.\nsearch: Korvath (Elmaria)", ("search", "Korvath (Elmaria)")),
        ("Answer: Korvath", ("answer", "Korvath")),
        ("stray </search> <answer>Korvath</answer>", ("answer", "Korvath")),
        ("just text", None),
    ],
)
def test_parse_action_lenient(action: str, parsed: tuple[str, str] | None) -> None:
    assert parse_action(action, lenient=True) == parsed


def make_env(small_dir: Path, **kwargs: object) -> SearchEnv:
    return SearchEnv(corpus=str(small_dir / "corpus.jsonl"), qa=str(small_dir / "qa.jsonl"), **kwargs)  # type: ignore[arg-type]


def test_a_flashrag_corpus_and_qa_file_round_trip(small_dir: Path) -> None:
    env = make_env(small_dir, topk=2)
    text, info = env.reset(task_id="q0")
    assert text == "Question: Where was the architect Ilsa Varn born?" and info == {"searches": 0, "turns": 0}
    text, reward, terminated, truncated, info = env.step("<search>Ilsa Varn (architect)</search>")
    assert text.startswith(
        "<information>Doc 1(Title: Ilsa Varn (architect)) Ilsa Varn is an architect, born in Korvath"
    )
    assert text.count("Doc ") == 2 and text.endswith("</information>")
    assert (reward, terminated, truncated, info["searches"]) == (0.0, False, False, 1)
    text, reward, terminated, truncated, info = env.step("<answer>the Korvath.</answer>")
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["em"] == 1.0 and info["f1"] == 1.0 and info["searches"] == 1 and info["won"] is True
    assert env.step("<answer>x</answer>")[0] == "The episode is over. Reset to play again."


def test_a_wrong_answer_scores_zero_with_partial_f1(small_dir: Path) -> None:
    env = make_env(small_dir)
    env.reset(task_id=1)  # a line index works as well as the row id
    _, reward, terminated, _, info = env.step("<answer>Ilsa Quist</answer>")
    assert (reward, terminated, info["em"]) == (0.0, True, 0.0)
    assert info["f1"] == pytest.approx(0.5)


def test_invalid_actions_and_the_turn_limit(small_dir: Path) -> None:
    env = make_env(small_dir, max_turns=2)
    env.reset(task_id=0)
    text, reward, terminated, truncated, info = env.step("I am not sure")
    assert text == INVALID and info["invalid_action"] is True and not (terminated or truncated)
    text, reward, terminated, truncated, info = env.step("<search>Korvath</search>")
    assert truncated and not terminated and reward == 0.0 and info["em"] == 0.0
    assert text.endswith("The turn limit is reached without an answer.")


def test_lenient_tags_accept_the_older_forms_and_refuse_an_empty_search(small_dir: Path) -> None:
    strict, lenient = make_env(small_dir), make_env(small_dir, lenient_tags=True)
    strict.reset(task_id=0)
    lenient.reset(task_id=0)
    assert strict.step("<search></search>")[0] == "<information></information>"  # no term: no passage
    assert lenient.step("<search></search>")[4]["invalid_action"] is True
    assert strict.step("answer: Korvath")[0] == INVALID
    assert lenient.step("answer: Korvath")[1] == 1.0


def test_bad_settings_and_ids_say_what_to_do(small_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="line index 0-1 or a row id"):
        make_env(small_dir).reset(task_id=7)
    with pytest.raises(ValueError, match="retriever_url"):
        SearchEnv(retriever="url")
    with pytest.raises(ValueError, match="'bm25', 'dense' or 'url'"):
        make_env(small_dir, retriever="sparse")
    with pytest.raises(FileNotFoundError, match="corpus=PATH"):
        SearchEnv(corpus=str(tmp_path / "missing.jsonl"))
    (tmp_path / "bad.jsonl").write_text('{"question": "q", "golden_answers": []}\n')
    with pytest.raises(ValueError, match="non-empty list"):
        SearchEnv(corpus=str(small_dir / "corpus.jsonl"), qa=str(tmp_path / "bad.jsonl")).reset(task_id=0)


def test_the_generated_default_splits(search_spec: object) -> None:
    from agenthub_env_search.data import default_dataset, load_questions
    from agenthub_env_search.tasks import TEST_COUNT, TRAIN_COUNT

    data = default_dataset()
    assert len(load_questions(str(data / "train.jsonl"))) == TRAIN_COUNT
    assert len(load_questions(str(data / "test.jsonl"))) == TEST_COUNT
    with (data / "corpus.jsonl").open() as f:
        assert sum(1 for _ in f) > 20000  # tens of thousands of passages
    env = SearchEnv()
    text, info = env.reset(task_id=TRAIN_COUNT + 3)
    assert text.startswith("Question: What is the name of") and 1 <= info["hops"] <= 4
