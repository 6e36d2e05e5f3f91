"""BM25 on a small corpus made here: ranking, the on-disk cache, memory mapping."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from agenthub_env_search.bm25 import BM25Index, BM25Params


def rows(corpus: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in corpus.read_text().splitlines()]


def test_an_exact_title_query_ranks_its_passage_first(small_dir: Path) -> None:
    index = BM25Index(small_dir / "corpus.jsonl")
    corpus = rows(small_dir / "corpus.jsonl")
    assert len(index) == len(corpus) == 5
    for row in corpus:
        title = str(row["contents"]).split("\n")[0].strip('"')
        assert index.search([title], k=2)[0][0].id == row["id"], title
    poet, architect = index.search(["Ilsa Varn poet", "Ilsa Varn architect"], k=1)
    assert (poet[0].title, architect[0].title) == ("Ilsa Varn (poet)", "Ilsa Varn (architect)")
    assert index.search(["the of a", ""], k=1) == [[], []]  # no term to match: no passage (as Lucene), no error


def test_the_index_is_cached_next_to_the_corpus_and_memory_mapped(small_dir: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    shutil.copy(small_dir / "corpus.jsonl", corpus)
    first = BM25Index(corpus)
    assert first.index_dir.parent == tmp_path and "k11.2-b0.75" in first.index_dir.name
    built = first.meta["build_seconds"]
    second = BM25Index(corpus)
    assert second.meta["build_seconds"] == built  # read back, not rebuilt
    assert isinstance(second.model.scores["data"], np.memmap)
    assert isinstance(second.offsets, np.memmap)
    other = BM25Index(corpus, BM25Params(k1=0.9, stemmer="none"))
    assert other.index_dir != first.index_dir  # other parameters, other cache
    # A changed corpus is noticed and indexed again.
    with corpus.open("a") as f:
        f.write(json.dumps({"id": "z", "contents": "Zebulon\nA new passage about zebulon."}) + "\n")
    assert BM25Index(corpus).search(["Zebulon"], k=1)[0][0].id == "z"
