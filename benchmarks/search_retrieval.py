"""The search env's retrieval: BM25 index build, query throughput and latency, memory.

On the generated Fictopedia corpus (25,030 passages; ``agenthub_env_search.fictopedia``):

* index build time and on-disk size (a fresh copy of the corpus in a temp dir, so nothing cached);
* queries/s and p50/p99 per query through ``agenthub serve-retriever`` for N = 1, 2, 4 server
  processes memory-mapping the one cached index, driven by client threads sending one-query
  requests round-robin (the queries are the titles of the questions' gold chains);
* each server's RSS and USS (its private pages: what it does not share) with the index loaded;
* the memory one more env session costs: tracemalloc over ``SearchEnv`` instances, built and reset.

    python benchmarks/search_retrieval.py            # ~1 minute
    python benchmarks/search_retrieval.py --quick    # servers 1 and 2, fewer queries; temp dir

Writes benchmarks/results/search_retrieval.json (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import psutil
from agenthub_env_search.bm25 import BM25Index, index_bytes
from agenthub_env_search.data import default_dataset, load_questions
from agenthub_env_search.env import SearchEnv
from provenance import write_result  # a sibling module of this script

RESULTS = Path(__file__).resolve().parent / "results"
MIB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build(corpus: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agenthub-bench-search-") as tmp:
        copy = Path(tmp) / "corpus.jsonl"
        shutil.copy(corpus, copy)
        started = time.perf_counter()
        index = BM25Index(copy)
        seconds = time.perf_counter() - started
        return {
            "passages": len(index),
            "corpus_mib": round(copy.stat().st_size / MIB, 2),
            "build_s": round(seconds, 2),
            "index_mib": round(index_bytes(index.index_dir) / MIB, 2),
        }


def start_servers(n: int, corpus: Path) -> list[tuple[subprocess.Popen[bytes], str]]:
    servers = []
    for _ in range(n):
        port = free_port()
        cmd = [sys.executable, "-m", "agenthub", "serve-retriever", f"corpus={corpus}", f"port={port}"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        servers.append((proc, f"http://127.0.0.1:{port}"))
    for proc, url in servers:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"serve-retriever at {url} did not come up (exit {proc.poll()})")
            time.sleep(0.1)
    return servers


def drive(urls: list[str], queries: list[str], clients: int) -> dict[str, Any]:
    latencies: list[float] = []
    lock = threading.Lock()
    chunks = [queries[i::clients] for i in range(clients)]

    def worker(index: int) -> None:
        url = urls[index % len(urls)]
        mine = []
        with httpx.Client(timeout=60) as client:
            for query in chunks[index]:
                t0 = time.perf_counter()
                client.post(f"{url}/retrieve", json={"queries": [query], "topk": 3}).raise_for_status()
                mine.append(time.perf_counter() - t0)
        with lock:
            latencies.extend(mine)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    latencies.sort()
    return {
        "queries": len(latencies),
        "clients": clients,
        "queries_per_s": round(len(latencies) / wall, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(latencies[int(0.99 * (len(latencies) - 1))] * 1000, 2),
    }


def batch_rate(url: str, queries: list[str], batch: int) -> dict[str, Any]:
    started = time.perf_counter()
    with httpx.Client(timeout=120) as client:
        for i in range(0, len(queries), batch):
            client.post(f"{url}/retrieve", json={"queries": queries[i : i + batch], "topk": 3}).raise_for_status()
    return {"batch": batch, "queries_per_s": round(len(queries) / (time.perf_counter() - started), 1)}


def per_session(sessions: int) -> dict[str, Any]:
    SearchEnv().reset(task_id=0)  # the shared index and the question file load once, outside the count
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    envs = [SearchEnv() for _ in range(sessions)]
    for i, env in enumerate(envs):
        env.reset(task_id=i)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"sessions": sessions, "bytes_per_session": (after - before) // sessions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="servers 1 and 2, 300 queries; writes to a temp dir")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or (Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS)
    data = default_dataset()
    corpus = data / "corpus.jsonl"
    BM25Index(corpus)  # the shared cached index, built before the servers start
    titles = [t for row in load_questions(str(data / "test.jsonl")) for t in row["metadata"]["chain"]]
    queries = (titles * 4)[: 300 if args.quick else 2000]
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "build": build(corpus),
        "servers": [],
    }
    for n in [1, 2] if args.quick else [1, 2, 4]:
        servers = start_servers(n, corpus)
        try:
            urls = [url for _, url in servers]
            drive(urls, queries[:50], 2 * n)  # warm-up: pages of the index come into the page cache
            row = {"servers": n, **drive(urls, queries, 4 * n)}
            if n == 1:
                row["batched"] = batch_rate(urls[0], queries, 64)
            mems = [psutil.Process(proc.pid).memory_full_info() for proc, _ in servers]
            row["rss_mib_each"] = [round(m.rss / MIB, 1) for m in mems]
            row["uss_mib_each"] = [round(m.uss / MIB, 1) for m in mems]
            result["servers"].append(row)
            print(json.dumps(row))
        finally:
            for proc, _ in servers:
                proc.terminate()
                proc.wait(10)
    result["per_session"] = per_session(200)
    out.mkdir(parents=True, exist_ok=True)
    write_result(out / "search_retrieval.json", result, args, indent=1)
    print(json.dumps(result, indent=1))
    print(f"wrote {out / 'search_retrieval.json'}")


if __name__ == "__main__":
    main()
