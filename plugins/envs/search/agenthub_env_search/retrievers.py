"""The env's retrievers: the in-process BM25 index, or a retrieval service over HTTP.

The HTTP form speaks Search-R1's retrieval-server API (``POST /retrieve`` with ``{"queries",
"topk", "return_scores"}``, answering ``{"result": [[{"document": {"id", "contents"}, "score"}]]}``),
so ``retriever=url`` works with ``agenthub serve-retriever`` and with Search-R1's own dense
(e5 + FAISS) server for users who run one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import httpx

from agenthub_env_search.bm25 import BM25Params, Passage, shared_index, split_contents


class Retriever(Protocol):
    def search(self, queries: list[str], k: int) -> list[list[Passage]]: ...


class BM25Retriever:
    def __init__(self, corpus: Path, params: BM25Params | None = None) -> None:
        self.index = shared_index(corpus, params)

    def search(self, queries: list[str], k: int) -> list[list[Passage]]:
        return self.index.search(queries, k)


class UrlRetriever:
    def __init__(self, url: str, timeout: float = 30.0, token: str | None = None) -> None:
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else None
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def search(self, queries: list[str], k: int) -> list[list[Passage]]:
        try:
            response = self._client.post(
                f"{self.url}/retrieve", json={"queries": queries, "topk": k, "return_scores": True}
            )
            response.raise_for_status()
            rows = response.json()["result"]
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise RuntimeError(
                f"the retrieval service at {self.url} failed ({exc}); check that `agenthub serve-retriever` "
                "(or a Search-R1 retrieval server) is running there"
            ) from exc
        out: list[list[Passage]] = []
        for row in rows:
            hits = []
            for hit in row:
                doc = hit.get("document", hit)
                contents = str(doc.get("contents", ""))
                title, text = split_contents(contents)
                hits.append(Passage(str(doc.get("id", "")), title, text, float(hit.get("score", 0.0)), contents))
            out.append(hits)
        return out

    def close(self) -> None:
        self._client.close()
