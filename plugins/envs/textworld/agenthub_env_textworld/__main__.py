"""``python -m agenthub_env_textworld pregenerate``: fill the game cache before a run instead of during it.

A game takes one to a few seconds to generate on first use; a training run
that starts hundreds of new tasks at once spends its first minutes waiting
for them unless they were generated beforehand.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from .games import GameCache
from .generation import default_workers
from .tasks import FAMILIES, LEVELS_PER_FAMILY, SPLITS, TEST_GAMES_PER_LEVEL, TRAIN_GAMES_PER_LEVEL, game_spec, task_id


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m agenthub_env_textworld", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pre = commands.add_parser("pregenerate", help="generate the games of some tasks into the cache")
    pre.add_argument("--split", choices=list(SPLITS), default="train")
    pre.add_argument("--family", choices=FAMILIES, action="append", help="repeatable; default: every family")
    pre.add_argument("--level", type=int, choices=range(1, LEVELS_PER_FAMILY + 1), action="append", metavar="1-5")
    pre.add_argument("--count", type=int, default=10, help="games per family and level, from game 0 (default 10)")
    pre.add_argument("--cache-dir", help="default: $AGENTHUB_TEXTWORLD_CACHE or ~/.cache/agenthub/textworld")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    per_level = TRAIN_GAMES_PER_LEVEL if args.split == "train" else TEST_GAMES_PER_LEVEL
    if not 1 <= args.count <= per_level:
        print(f"--count must be 1 to {per_level} for split {args.split!r}, got {args.count}", file=sys.stderr)
        return 2
    families = args.family or list(FAMILIES)
    levels = args.level or list(range(1, LEVELS_PER_FAMILY + 1))
    specs = [
        game_spec(task_id(args.split, family, level, index))
        for family in families
        for level in levels
        for index in range(args.count)
    ]
    cache = GameCache(args.cache_dir)
    started = time.perf_counter()
    missing = [spec for spec in specs if not cache.cached(spec)]
    print(f"{len(specs)} games, {len(missing)} to generate into {cache.dir}", flush=True)
    with ThreadPoolExecutor(max_workers=default_workers()) as pool:
        for done, path in enumerate(pool.map(cache.ensure, missing), 1):
            print(f"[{done}/{len(missing)}] {path.parent.name}", flush=True)
    print(f"done in {time.perf_counter() - started:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
