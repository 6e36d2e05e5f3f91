"""Regenerate the built-in shop's catalogue and task set (data/catalog.json, data/tasks/{train,test}/*.json).

Deterministic: the same seed gives the same bytes (tests/test_webarena_tasks_shop.py checks the shipped files).
Run from anywhere: ``python plugins/envs/webarena/tools/generate_shop_data.py [--seed N]``.
"""

from __future__ import annotations

import argparse

from agenthub_env_webarena.shop.catalog import CATALOG_FILE, SEED, dump_catalog, generate_catalog
from agenthub_env_webarena.shop.tasks import TASKS_DIR, generate_tasks, write_tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    catalog = generate_catalog(args.seed)
    CATALOG_FILE.write_text(dump_catalog(catalog), encoding="utf-8")
    splits = generate_tasks(catalog, args.seed)
    write_tasks(splits)
    print(f"{CATALOG_FILE}: {len(catalog['products'])} products")
    for split, tasks in splits.items():
        print(f"{TASKS_DIR / split}: {len(tasks)} tasks")


if __name__ == "__main__":
    main()
