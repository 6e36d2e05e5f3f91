"""BM25 over a FlashRAG-format corpus with ``bm25s``, built once, cached on disk, memory-mapped.

``bm25s`` stores the scores as a sparse CSC matrix in ``.npy`` files, which load with
``mmap=True``: every env server process on a machine maps the same pages instead of holding its
own copy. The passages themselves are read through a memory map of the corpus file, located by a
memory-mapped array of line offsets. The cache sits next to the corpus, its directory named by
the parameters, so a change of parameters builds a new index instead of reading a stale one.
"""

from __future__ import annotations

import json
import mmap
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt

INDEX_FORMAT = 1


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str
    score: float
    source: str = ""
    """The corpus row's ``contents`` as written (wiki-18 quotes some titles); empty: title and text."""

    @property
    def contents(self) -> str:
        return self.source or f"{self.title}\n{self.text}"


@dataclass(frozen=True)
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    method: str = "lucene"
    stemmer: str = "english"  # "none" turns stemming off

    def dirname(self, corpus: Path) -> str:
        return f"{corpus.name}.bm25s-v{INDEX_FORMAT}-{self.method}-k1{self.k1}-b{self.b}-stem{self.stemmer}"


def split_contents(contents: str) -> tuple[str, str]:
    """wiki-18 writes the title on the first line, sometimes in double quotes."""
    title, _, text = contents.partition("\n")
    return title.strip().strip('"'), text.strip()


def _stemmer(name: str) -> Any:
    if name == "none":
        return None
    import Stemmer  # PyStemmer: an optional extra; without it use stemmer=none

    return Stemmer.Stemmer(name)


def build_index(corpus: Path, params: BM25Params, target: Path) -> None:
    """Tokenize and index the corpus into ``target`` (written aside, then renamed into place)."""
    started = time.perf_counter()
    offsets: list[int] = []
    texts: list[str] = []
    with corpus.open("rb") as f:
        position = 0
        for line in f:
            if line.strip():
                row = json.loads(line)
                contents = row.get("contents")
                if not isinstance(contents, str):
                    raise ValueError(f"{corpus}: a line has no string 'contents' (FlashRAG corpus format)")
                offsets.append(position)
                texts.append(contents)
            position += len(line)
    if not texts:
        raise ValueError(f"corpus {corpus} holds no passages")
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(params.stemmer), show_progress=False)
    model = bm25s.BM25(k1=params.k1, b=params.b, method=params.method)
    model.index(tokens, show_progress=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        model.save(str(tmp), show_progress=False)
        np.save(tmp / "offsets.npy", np.asarray(offsets, dtype=np.int64))
        stat = corpus.stat()
        meta = {
            "format": INDEX_FORMAT,
            "params": params.__dict__,
            "corpus_size": stat.st_size,
            "corpus_mtime_ns": stat.st_mtime_ns,
            "passages": len(texts),
            "build_seconds": round(time.perf_counter() - started, 3),
        }
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "meta.json").is_file():  # another process won the race: use its copy
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class BM25Index:
    """A loaded, memory-mapped index; ``search`` is thread-safe and takes a batch of queries."""

    def __init__(self, corpus: Path, params: BM25Params | None = None, index_dir: Path | None = None) -> None:
        self.corpus = corpus.resolve()
        if not self.corpus.is_file():
            raise FileNotFoundError(
                f"corpus {str(corpus)!r} does not exist; give corpus=PATH to a FlashRAG JSONL file "
                '({"id", "contents"} per line)'
            )
        self.params = params or BM25Params()
        self.index_dir = index_dir or self.corpus.parent / self.params.dirname(self.corpus)
        if not self._fresh():
            if self.index_dir.exists():
                shutil.rmtree(self.index_dir, ignore_errors=True)  # the corpus changed since it was built
            build_index(self.corpus, self.params, self.index_dir)
        self.meta: dict[str, Any] = json.loads((self.index_dir / "meta.json").read_text())
        self.model = bm25s.BM25.load(str(self.index_dir), mmap=True, show_progress=False)
        self.offsets: npt.NDArray[np.int64] = np.load(self.index_dir / "offsets.npy", mmap_mode="r")
        with self.corpus.open("rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._stem = _stemmer(self.params.stemmer)
        self._lock = threading.Lock()

    def _fresh(self) -> bool:
        meta_file = self.index_dir / "meta.json"
        if not meta_file.is_file():
            return False
        meta = json.loads(meta_file.read_text())
        stat = self.corpus.stat()
        return bool(meta.get("corpus_size") == stat.st_size and meta.get("corpus_mtime_ns") == stat.st_mtime_ns)

    def __len__(self) -> int:
        return int(self.offsets.shape[0])

    def passage(self, index: int, score: float = 0.0) -> Passage:
        start = int(self.offsets[index])
        end = self._map.find(b"\n", start)
        row = json.loads(self._map[start : end if end >= 0 else len(self._map)])
        title, text = split_contents(row["contents"])
        return Passage(str(row.get("id", index)), title, text, score, row["contents"])

    def search(self, queries: list[str], k: int = 3) -> list[list[Passage]]:
        if not queries:
            return []
        k = max(1, min(k, len(self)))
        tokens = bm25s.tokenize(queries, stopwords="en", stemmer=self._stem, show_progress=False, return_ids=False)
        with self._lock:  # bm25s keeps per-call state on the model
            return [self._top(query_tokens, k) for query_tokens in tokens]

    def _top(self, query_tokens: list[str], k: int) -> list[Passage]:
        """The k best passages that share a term with the query, as Lucene (Search-R1's BM25 server) returns.

        Top-k over the non-zero scores only: numpy's argpartition over the whole, mostly-zero score
        array was measured ~10x slower (ties slow its selection), and it ranked zero-score passages.
        """
        if not query_tokens or not any(t in self.model.vocab_dict for t in query_tokens):
            return []
        scores = self.model.get_scores(query_tokens)
        hits = np.flatnonzero(scores > 0)
        if len(hits) > k:
            hits = hits[np.argpartition(-scores[hits], k - 1)[:k]]
        # Best first; equal scores by corpus order, so that answers do not depend on numpy's selection.
        hits = hits[np.lexsort((hits, -scores[hits]))]
        return [self.passage(int(d), float(scores[d])) for d in hits]


_LOADED: dict[tuple[str, BM25Params], BM25Index] = {}
_LOADING = threading.Lock()


def shared_index(corpus: Path, params: BM25Params | None = None) -> BM25Index:
    """One index per corpus and parameters per process: all sessions of a server share it."""
    key = (str(corpus.resolve()), params or BM25Params())
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = BM25Index(corpus, key[1])
        return _LOADED[key]


def index_bytes(index_dir: Path) -> int:
    return sum(p.stat().st_size for p in index_dir.iterdir() if p.is_file())


__all__ = ["BM25Index", "BM25Params", "Passage", "build_index", "index_bytes", "shared_index", "split_contents"]
