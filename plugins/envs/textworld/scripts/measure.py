"""Measure what README.md reports: generation time, reset and step times, and the oracle's success.

    python plugins/envs/textworld/scripts/measure.py --games 3 --cache-dir /tmp/tw-measure

Games are generated one at a time (so each time is one game's alone); the
oracle plays each game in-process with TextWorld's walkthrough and the
50-turn limit. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from agenthub_env_textworld.env import TextWorldEnv
from agenthub_env_textworld.games import GameCache
from agenthub_env_textworld.plugin import DEFAULT_MAX_TURNS
from agenthub_env_textworld.tasks import FAMILIES, LEVELS_PER_FAMILY, game_spec, task_id

PROBE = ["look", "inventory", "go north", "go south", "go east", "go west"] * 2


def generate_and_play(env: TextWorldEnv, cache: GameCache, games: int) -> dict[str, Any]:
    rows = []
    for split in ("train", "test"):
        for family in FAMILIES:
            for level in range(1, LEVELS_PER_FAMILY + 1):
                for index in range(games):
                    spec = game_spec(task_id(split, family, level, index))
                    started = time.perf_counter()
                    cache.ensure(spec)
                    seconds = time.perf_counter() - started
                    _, info = env.reset(task_id=spec.task_id, options={"walkthrough": True})
                    won, turns = False, 0
                    for command in info["walkthrough"][:DEFAULT_MAX_TURNS]:
                        turns += 1
                        _, _, terminated, _, step_info = env.step(command)
                        if terminated:
                            won = bool(step_info["won"])
                            break
                    rows.append(
                        {
                            "split": split,
                            "family": family,
                            "level": level,
                            "task_id": spec.task_id,
                            "generation_s": seconds,
                            "walkthrough": len(info["walkthrough"]),
                            "won": won,
                            "turns": turns,
                        }
                    )
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return {"games": rows}


def step_times(cache: GameCache, repeats: int) -> list[dict[str, Any]]:
    """Medians, which the other jobs of a shared machine disturb less than means."""
    warm = TextWorldEnv(cache_dir=cache.root)
    started = time.perf_counter()
    warm.reset(task_id=task_id("train", "cooking", 1, 1))  # parses TextWorld's knowledge base, once per process
    out: list[dict[str, Any]] = [{"first_load_in_process_s": time.perf_counter() - started}]
    warm.close()
    for family in FAMILIES:
        for level in (1, LEVELS_PER_FAMILY):
            tid = task_id("train", family, level, 0)
            # The walkthrough without its winning command, then moves and looks: an episode that never ends.
            commands = cache.walkthrough(game_spec(tid))[:-1] + PROBE
            env = TextWorldEnv(cache_dir=cache.root)
            started = time.perf_counter()
            env.reset(task_id=tid)
            load_s = time.perf_counter() - started
            row: dict[str, Any] = {"family": family, "level": level, "load_s": load_s, "steps": len(commands)}
            for admissible in (False, True):
                resets, steps = [], []
                for _ in range(repeats):
                    started = time.perf_counter()
                    env.reset(task_id=tid, options={"admissible_commands": admissible})
                    resets.append(time.perf_counter() - started)
                    for command in commands:
                        started = time.perf_counter()
                        env.step(command)
                        steps.append(time.perf_counter() - started)
                key = "admissible" if admissible else "plain"
                row[f"reset_ms_{key}"] = 1000 * statistics.median(resets)
                row[f"step_ms_{key}"] = 1000 * statistics.median(steps)
            env.close()
            out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="games per family, level and split (0: timings only)")
    parser.add_argument("--repeats", type=int, default=20, help="episodes per timing")
    parser.add_argument("--cache-dir", required=True)
    args = parser.parse_args()
    cache = GameCache(args.cache_dir)
    env = TextWorldEnv(cache_dir=cache.root)
    result = generate_and_play(env, cache, args.games)
    env.close()
    result["timings"] = step_times(cache, args.repeats)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
