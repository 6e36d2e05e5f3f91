"""The search env's retrieval at a realistic size: BM25 queries/s, p50/p99 and memory at 1, 2 and 4 servers.

* **Corpus**: ``--passages`` generated passages (default 1,000,000; :func:`generated_corpus`): a
  seeded Zipf vocabulary of made-up words, a title and 20 to 40 words each, in FlashRAG's JSONL.
  Written once to the search env's cache and reused; its BM25 index (bm25s, memory-mapped) is
  built once next to it and cached too, so a second run loads it (the JSON says which happened).
* **Queries**: ``--queries`` distinct queries, each a passage's title and two of its words, never
  repeated, so no server answers from warm pages of an earlier identical query.
* **Load**: ``--loadgen-processes`` processes (not threads of one interpreter), each with
  ``--clients`` threads sending one-query requests (top 3) round-robin over the servers, all
  released at one instant; queries/s is every answer over the wall time of the slowest process.
* For N = 1, 2, 4 ``agenthub serve-retriever`` processes memory-mapping the one index: queries/s,
  p50 and p99 per query, and each server's RSS and USS (its private pages: what it does not share).
* The memory one more env session costs: tracemalloc over ``SearchEnv`` instances (the env's own
  Fictopedia data), built and reset.

    python benchmarks/search_retrieval.py                 # 1M passages: first run builds (minutes), then cached
    python benchmarks/search_retrieval.py --quick         # 30k passages, servers 1 and 2, 400 queries; temp dir

Writes benchmarks/results/search_retrieval.json (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import platform
import random
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
from agenthub_env_search.data import cache_root
from agenthub_env_search.env import SearchEnv
from provenance import write_result  # a sibling module of this script

RESULTS = Path(__file__).resolve().parent / "results"
MIB = 1024 * 1024
GENERATOR_VERSION = 1
"""Bump when :func:`generated_corpus` changes its output, so a cached corpus of the old kind is not reused."""
_SYLLABLES = ("ka", "lo", "mi", "ren", "tas", "vo", "qui", "dar", "en", "su", "bri", "thal", "or", "ny", "pes", "ux")


def vocabulary(rng: random.Random, size: int) -> list[str]:
    """``size`` distinct made-up words of two to four syllables."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def generated_corpus(passages: int, seed: int = 0) -> Path:
    """A FlashRAG corpus of ``passages`` generated passages in the search env's cache: made once, then reused.

    Words follow a Zipf law (rank r drawn with weight 1 / r^1.07, as in natural text), so BM25's
    posting lists have natural text's shape: a few very long, most short.
    """
    target = cache_root() / f"bench-passages-v{GENERATOR_VERSION}-{passages}-seed{seed}" / "corpus.jsonl"
    if target.is_file():
        return Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    words = vocabulary(rng, 60_000)
    cumulative, total = [], 0.0
    for rank in range(1, len(words) + 1):
        total += 1 / rank**1.07
        cumulative.append(total)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")  # written aside and renamed: never read half-written
    with tmp.open("w", encoding="utf-8") as f:
        for i in range(passages):
            title = " ".join(w.capitalize() for w in rng.choices(words[1000:], k=2))
            text = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(20, 40)))
            f.write(json.dumps({"id": str(i), "contents": f"{title}\n{title} {text}."}) + "\n")
    tmp.rename(target)
    return Path(target)


def distinct_queries(corpus: Path, count: int, seed: int = 1) -> list[str]:
    """``count`` different queries, each a random passage's title and two of its words."""
    with corpus.open(encoding="utf-8") as f:
        lines = f.readlines()
    rng = random.Random(seed)
    queries: dict[str, None] = {}
    for index in rng.sample(range(len(lines)), min(len(lines), 2 * count)):
        title, _, text = json.loads(lines[index])["contents"].partition("\n")
        words = text.rstrip(".").split()[2:]
        queries[f"{title} {' '.join(rng.sample(words, 2))}"] = None
        if len(queries) == count:
            break
    return list(queries)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load_index(corpus: Path) -> dict[str, Any]:
    """The cached index, built here if there is none yet: passages, sizes, and whether this run built it."""
    cached = any(corpus.parent.glob("*/meta.json"))  # an index of this corpus already built by an earlier run
    started = time.perf_counter()
    index = BM25Index(corpus)
    seconds = time.perf_counter() - started
    return {
        "passages": len(index),
        "corpus_mib": round(corpus.stat().st_size / MIB, 2),
        "build_s": index.meta.get("build_seconds"),
        "built_in_this_run": not cached,
        "open_s": round(seconds, 2),
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


def _client_process(urls: list[str], queries: list[str], clients: int, offset: int, start_at: float) -> list[float]:
    """One load-generator process: ``clients`` threads, each its own connection, from ``start_at`` on."""
    latencies: list[float] = []
    lock = threading.Lock()
    chunks = [queries[i::clients] for i in range(clients)]

    def worker(index: int) -> None:
        url = urls[(offset + index) % len(urls)]
        mine = []
        with httpx.Client(timeout=120) as client:
            for query in chunks[index]:
                t0 = time.perf_counter()
                client.post(f"{url}/retrieve", json={"queries": [query], "topk": 3}).raise_for_status()
                mine.append(time.perf_counter() - t0)
        with lock:
            latencies.extend(mine)

    time.sleep(max(0.0, start_at - time.time()))
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies.append(time.time() - start_at)  # the last entry: this process's wall time
    return latencies


def drive(urls: list[str], queries: list[str], processes: int, clients: int) -> dict[str, Any]:
    """Every query once, from ``processes`` processes of ``clients`` threads, released together."""
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter each: no lock or GIL shared with this one
    with concurrent.futures.ProcessPoolExecutor(processes, mp_context=spawn) as pool:
        start_at = time.time() + 3.0  # time for the interpreters to start and import httpx
        futures = [
            pool.submit(_client_process, urls, queries[p::processes], clients, p * clients, start_at)
            for p in range(processes)
        ]
        parts = [f.result() for f in futures]
    wall = max(part[-1] for part in parts)
    latencies = sorted(x for part in parts for x in part[:-1])
    return {
        "queries": len(latencies),
        "loadgen_processes": processes,
        "clients": processes * clients,
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
    parser.add_argument("--passages", type=int, default=None, help="generated passages (default 1,000,000)")
    parser.add_argument("--queries", type=int, default=None, help="distinct queries per server count (default 4000)")
    parser.add_argument("--servers", type=int, nargs="+", default=None, help="server counts (default 1 2 4)")
    parser.add_argument("--loadgen-processes", type=int, default=4, help="load-generator processes (default 4)")
    parser.add_argument("--clients", type=int, default=4, help="threads per load-generator process (default 4)")
    parser.add_argument("--quick", action="store_true", help="30k passages, servers 1 and 2, 400 queries; temp dir")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    args.passages = args.passages or (30_000 if args.quick else 1_000_000)
    args.queries = args.queries or (400 if args.quick else 4000)
    args.servers = args.servers or ([1, 2] if args.quick else [1, 2, 4])
    if args.passages < 1000 or args.queries < 10 or args.loadgen_processes < 1 or args.clients < 1:
        parser.error("give at least 1000 passages, 10 queries, 1 load-generator process and 1 client")
    out = args.out or (Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS)
    corpus = generated_corpus(args.passages)
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "corpus": str(corpus.parent.name),
        "build": load_index(corpus),  # the shared cached index, built (once) before the servers start
        "servers": [],
    }
    # One query set per server count, none repeated within or across them.
    queries = distinct_queries(corpus, args.queries * (len(args.servers) + 1))
    warm, rest = queries[: args.queries], queries[args.queries :]
    for i, n in enumerate(args.servers):
        servers = start_servers(n, corpus)
        try:
            urls = [url for _, url in servers]
            drive(urls, warm[i * 50 : (i + 1) * 50], 1, 2)  # warm-up: the servers' code paths, not these queries
            mine = rest[i * args.queries : (i + 1) * args.queries]
            row = {"servers": n, **drive(urls, mine, args.loadgen_processes, args.clients)}
            if n == 1:
                row["batched"] = batch_rate(urls[0], warm[len(args.servers) * 50 :], 64)
            mems = [psutil.Process(proc.pid).memory_full_info() for proc, _ in servers]
            row["rss_mib_each"] = [round(m.rss / MIB, 1) for m in mems]
            row["uss_mib_each"] = [round(m.uss / MIB, 1) for m in mems]
            result["servers"].append(row)
            print(json.dumps(row), flush=True)
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
