"""How fast ``agenthub view`` opens a large run: index build, first page, filters, incremental updates.

A synthetic run is written with the real :class:`~agenthub.rollout.store.RunStore`:
``--episodes`` trajectories (default 100,000) of ten turns each, with text the size of a
text-game's (observations ~300 characters, ``available_actions`` in ``info``), 200 tasks of
several samples, mixed outcomes, and a token trace (~700 tokens) on one episode in ten.
Then, through the viewer's own HTTP app (in-process ASGI, so no socket time is counted):

- ``first_page_fresh_s``: a fresh run (no index yet), the app started, the first page of 50
  episodes asked for at once: what a user waits for when opening a new run;
- ``index_build_s``: the whole index built from scratch, alone (``RunIndex.update()``);
- ``open_indexed_s``: a new app on the indexed run: the run, facets and first page;
- ``filtered_page_s`` (median of repeats): ``outcome=success``, one task, a reward range, sorted by reward;
- ``task_table_s``: the per-task table with pass@k;
- ``episode_s``: one full episode (a seek and a parse);
- ``incremental_update_s``: 1,000 more episodes appended (``RunStore.resume``), then indexed;
- ``report_s``: ``agenthub report`` of the run (every summary row, 500 full episodes).

    pip install -e '.[bench]'
    python benchmarks/viewer_index.py [--episodes 100000] [--quick] [--out DIR]

Writes ``viewer_index.json`` and ``viewer_index.png`` to benchmarks/results/ (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from provenance import write_result  # a sibling module of this script

from agenthub.rollout.store import RunStore
from agenthub.types import Outcome, Task, TokenTrace, Trajectory, Turn
from agenthub.viewer.api import create_app
from agenthub.viewer.index import RunIndex
from agenthub.viewer.report import write_report

RESULTS = Path(__file__).resolve().parent / "results"
RUN_ID = "synthetic"
TURNS = 10
TASKS = 200
APPENDED = 1000
ACTIONS = [f"take {item}" for item in ("key", "lamp", "sword", "map", "coin", "rope", "apple", "torch")]
WORDS = [
    "the",
    "a",
    "room",
    "door",
    "north",
    "south",
    "east",
    "west",
    "you",
    "see",
    "an",
    "old",
    "wooden",
    "chest",
    "lamp",
    "key",
    "table",
    "dusty",
    "light",
]


def observation(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(60)).capitalize() + "."


def trajectory(number: int, rng: random.Random) -> Trajectory:
    task = number % TASKS
    success = rng.random() < 0.3 + 0.4 * (task % 3) / 2
    outcome = Outcome.SUCCESS if success else rng.choice([Outcome.FAILURE, Outcome.FAILURE, Outcome.TRUNCATED])
    turns = [
        Turn(
            action=rng.choice(ACTIONS),
            observation=observation(rng),
            reward=1.0 if success and t == TURNS - 1 else 0.0,
            terminated=success and t == TURNS - 1,
            truncated=False,
            info={"available_actions": ACTIONS, "moves": t + 1},
        )
        for t in range(TURNS)
    ]
    tokens = None
    if number % 10 == 0:
        ids = [rng.randrange(32000) for _ in range(600)]
        mask = [int(i % 60 < 12) for i in range(600)]
        tokens = TokenTrace(
            prompt_ids=[rng.randrange(32000) for _ in range(100)],
            response_ids=ids,
            response_mask=mask,
            logprobs=[round(-rng.random(), 4) if m else 0.0 for m in mask],
        )
    return Trajectory(
        task=Task(env="textgame", task_id=task, split="train", seed=number // TASKS),
        first_observation=observation(rng),
        turns=turns,
        reward=1.0 if success else 0.0,
        outcome=outcome,
        key=f"{task}/{number // TASKS}",
        tokens=tokens,
        duration_s=round(rng.uniform(1, 30), 3),
        provenance={"agent": "synthetic", "step": number // 1000},
    )


def write_run(root: Path, episodes: int) -> Path:
    rng = random.Random(0)
    store = RunStore.create({"env": "textgame", "agent": "synthetic"}, root=root, run_id=RUN_ID)
    for number in range(episodes):
        store.write(trajectory(number, rng))
    for step in range(1, 101):
        store.log_metrics({"step": step, "success": min(1.0, step / 100 + rng.uniform(-0.05, 0.05)), "loss": 1 / step})
    store.finish({"episodes": episodes})
    return store.path


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def ok(client: TestClient, url: str) -> Any:
    response = client.get(url)
    if response.status_code != 200:
        raise RuntimeError(f"GET {url} answered {response.status_code}: {response.text}")
    return response.json()


def measure(root: Path, run_dir: Path, repeats: int) -> dict[str, Any]:
    api = f"/api/runs/{RUN_ID}"
    results: dict[str, Any] = {"file_mb": round((run_dir / "trajectories.jsonl").stat().st_size / 1e6, 1)}

    with TestClient(create_app(root)) as client:  # a fresh run: the background indexer starts with the app
        seconds, page = timed(lambda: ok(client, f"{api}/episodes?limit=50"))
        results["first_page_fresh_s"] = round(seconds, 4)
        results["first_page_fresh_rows"] = len(page["episodes"])
        results["first_page_fresh_indexed"] = page["index"]["episodes"]
    for suffix in ("", "-wal", "-shm"):
        Path(str(run_dir / ".viewer-index.sqlite") + suffix).unlink(missing_ok=True)

    index = RunIndex(run_dir)
    seconds, status = timed(index.update)
    results["index_build_s"] = round(seconds, 3)
    results["episodes"] = status.episodes
    results["index_mb"] = round(index.path.stat().st_size / 1e6, 1)

    with TestClient(create_app(root)) as client:
        seconds, _ = timed(
            lambda: [ok(client, api), ok(client, f"{api}/facets"), ok(client, f"{api}/episodes?limit=50")]
        )
        results["open_indexed_s"] = round(seconds, 4)
        filtered = f"{api}/episodes?outcome=success&task=7&min_reward=0.5&sort=-reward&limit=50"
        times = [timed(lambda: ok(client, filtered))[0] for _ in range(repeats)]
        results["filtered_page_s"] = round(statistics.median(times), 4)
        results["filtered_total"] = ok(client, filtered)["total"]
        deep = f"{api}/episodes?outcome=failure&offset=40000&limit=50"
        results["deep_page_s"] = round(
            statistics.median([timed(lambda: ok(client, deep))[0] for _ in range(repeats)]), 4
        )
        results["task_table_s"] = round(timed(lambda: ok(client, f"{api}/tasks?limit=100"))[0], 4)
        results["episode_s"] = round(timed(lambda: ok(client, f"{api}/episodes/{status.episodes // 2}"))[0], 4)
        results["metrics_s"] = round(timed(lambda: ok(client, f"{api}/metrics"))[0], 4)

    store = RunStore.resume(run_dir)
    rng = random.Random(1)
    for number in range(status.episodes, status.episodes + APPENDED):
        store.write(trajectory(number, rng))
    store.close()
    seconds, after = timed(index.update)
    results["incremental_update_s"] = round(seconds, 4)
    results["incremental_episodes"] = after.episodes - status.episodes

    report = root / "report.html"
    seconds, written = timed(lambda: write_report(root, report))
    results["report_s"] = round(seconds, 3)
    results["report_mb"] = round(written["bytes"] / 1e6, 1)
    return results


def plot(results: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [
        ("first_page_fresh_s", "first page, fresh run"),
        ("index_build_s", "full index build"),
        ("open_indexed_s", "open indexed run"),
        ("filtered_page_s", "filtered page"),
        ("deep_page_s", "page at offset 40,000"),
        ("task_table_s", "per-task table"),
        ("episode_s", "one full episode"),
        ("incremental_update_s", f"index +{APPENDED:,} appended"),
        ("report_s", "report.html"),
    ]
    labels = [label for key, label in names if key in results]
    values = [1000 * results[key] for key, _ in names if key in results]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bars = ax.barh(labels[::-1], values[::-1], color="#3557d4")
    ax.bar_label(bars, labels=[f"{v:,.0f} ms" if v >= 10 else f"{v:.1f} ms" for v in values[::-1]], padding=3)
    ax.set_xscale("log")
    ax.set_xlabel("milliseconds (log scale)")
    ax.set_title(f"agenthub view on a run of {results['episodes']:,} episodes ({results['file_mb']:,} MB)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="2,000 episodes: a smoke run; temp dir")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None, help=f"output directory (default {RESULTS})")
    args = parser.parse_args()
    if args.out is None:  # a smoke run never overwrites the committed result
        args.out = Path(tempfile.mkdtemp(prefix="agenthub-bench-")) if args.quick else RESULTS
    episodes = 2000 if args.quick else args.episodes
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "runs"
        write_s, run_dir = timed(lambda: write_run(root, episodes))
        print(f"wrote {episodes:,} episodes in {write_s:.1f} s", flush=True)
        results = measure(root, run_dir, args.repeats)
    results["write_run_s"] = round(write_s, 1)
    report = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            # a shared machine: other work's load is part of what the figures measured
            "load_average_1_5_15_before": [round(x, 2) for x in load_before],
            "load_average_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        },
        "date": time.strftime("%Y-%m-%d"),
        "settings": {"episodes": episodes, "turns": TURNS, "tasks": TASKS, "token_traces": "1 in 10"},
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    write_result(args.out / "viewer_index.json", report, args)
    plot(results, args.out / "viewer_index.png")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
