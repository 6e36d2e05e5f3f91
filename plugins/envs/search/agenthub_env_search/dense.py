"""Dense retrieval: passages embedded by any OpenAI-compatible ``/v1/embeddings`` endpoint, in FAISS.

For users who serve an embedding model (vLLM, TEI, llama.cpp, OpenAI itself). The corpus is
embedded once, in batches, into an exact inner-product index (``IndexFlatIP`` over normalized
vectors: cosine) saved next to the corpus in a directory named by the model; servers read it
with FAISS's memory-mapped I/O, so several share one copy. Passages are read like BM25's: a
memory map of the corpus at memory-mapped offsets. Needs the ``dense`` extra (``faiss-cpu``).
"""

from __future__ import annotations

import json
import mmap
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt

from agenthub_env_search.bm25 import Passage, split_contents

BATCH = 64


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise ImportError("retriever=dense needs FAISS: pip install 'agenthub-env-search[dense]' (faiss-cpu)") from exc
    return faiss


class Embedder:
    """Calls ``POST {url}/v1/embeddings`` with ``{"model", "input"}``; returns unit-length float32 rows."""

    def __init__(self, url: str, model: str, api_key: str | None = None, timeout: float = 120.0) -> None:
        base = url.rstrip("/")
        self.endpoint = base if base.endswith("/embeddings") else f"{base}/v1/embeddings"
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        try:
            response = self._client.post(self.endpoint, json={"model": self.model, "input": texts})
            response.raise_for_status()
            rows = sorted(response.json()["data"], key=lambda r: r["index"])
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise RuntimeError(
                f"the embeddings endpoint {self.endpoint} failed ({exc}); check embedding_url and "
                f"embedding_model={self.model!r} (an OpenAI-compatible /v1/embeddings server)"
            ) from exc
        vectors = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = vectors / np.maximum(norms, 1e-12)
        return unit

    def close(self) -> None:
        self._client.close()


class DenseIndex:
    def __init__(self, corpus: Path, embedder: Embedder, query_prefix: str = "", passage_prefix: str = "") -> None:
        self.corpus = corpus.resolve()
        if not self.corpus.is_file():
            raise FileNotFoundError(f"corpus {str(corpus)!r} does not exist; give corpus=PATH to a FlashRAG JSONL file")
        self.embedder, self.query_prefix = embedder, query_prefix
        faiss = _faiss()
        tag = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{embedder.model}-{passage_prefix}")
        self.index_dir = self.corpus.parent / f"{self.corpus.name}.faiss-{tag}"
        if not (self.index_dir / "faiss.index").is_file():
            self._build(passage_prefix)
        self.index = faiss.read_index(str(self.index_dir / "faiss.index"), faiss.IO_FLAG_MMAP)
        self.offsets: npt.NDArray[np.int64] = np.load(self.index_dir / "offsets.npy", mmap_mode="r")
        with self.corpus.open("rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._lock = threading.Lock()

    def _build(self, passage_prefix: str) -> None:
        faiss = _faiss()
        offsets: list[int] = []
        texts: list[str] = []
        with self.corpus.open("rb") as f:
            position = 0
            for line in f:
                if line.strip():
                    offsets.append(position)
                    texts.append(passage_prefix + str(json.loads(line)["contents"]))
                position += len(line)
        vectors = np.concatenate([self.embedder.embed(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)])
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        self.index_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=self.index_dir.name + ".", dir=self.index_dir.parent))
        try:
            faiss.write_index(index, str(tmp / "faiss.index"))
            np.save(tmp / "offsets.npy", np.asarray(offsets, dtype=np.int64))
            (tmp / "meta.json").write_text(json.dumps({"model": self.embedder.model, "dim": int(vectors.shape[1])}))
            try:
                tmp.rename(self.index_dir)
            except OSError:
                if not (self.index_dir / "faiss.index").is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def __len__(self) -> int:
        return int(self.offsets.shape[0])

    def close(self) -> None:
        self.embedder.close()

    def _passage(self, index: int, score: float) -> Passage:
        start = int(self.offsets[index])
        end = self._map.find(b"\n", start)
        row = json.loads(self._map[start : end if end >= 0 else len(self._map)])
        title, text = split_contents(row["contents"])
        return Passage(str(row.get("id", index)), title, text, score, row["contents"])

    def search(self, queries: list[str], k: int = 3) -> list[list[Passage]]:
        if not queries:
            return []
        vectors = self.embedder.embed([self.query_prefix + q for q in queries])
        with self._lock:
            scores, ids = self.index.search(vectors, max(1, min(k, len(self))))
        return [
            [self._passage(int(i), float(s)) for i, s in zip(row_ids, row_scores, strict=True) if i >= 0]
            for row_ids, row_scores in zip(ids, scores, strict=True)
        ]


_LOADED: dict[tuple[str, str, str, str, str], DenseIndex] = {}
_LOADING = threading.Lock()


def shared_dense(corpus: Path, url: str, model: str, query_prefix: str = "", passage_prefix: str = "") -> DenseIndex:
    """One dense index per corpus, endpoint and model per process, shared by its sessions."""
    key = (str(corpus.resolve()), url, model, query_prefix, passage_prefix)
    with _LOADING:
        if key not in _LOADED:
            _LOADED[key] = DenseIndex(corpus, Embedder(url, model), query_prefix, passage_prefix)
        return _LOADED[key]
