"""The shipped catalogue and task set: deterministic, valid WebArena configs, scored right by the evaluators.

The evaluator checks run the task files unchanged against a live session of the shop, addressed through
the ``sites`` mapping as a real WebArena deployment would be, with a real Chromium page; the state a task
asks for is made by plain HTTP calls (the oracle agent, through the accessibility tree, is tested elsewhere).
"""

from __future__ import annotations

import filecmp
import html
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agenthub_env_webarena.evaluators import evaluate
from agenthub_env_webarena.shop import (
    close_session_site,
    new_session_site,
    reset_session_site,
    shop_helpers,
    start_shop,
)
from agenthub_env_webarena.shop.catalog import CATALOG_FILE, dump_catalog, generate_catalog
from agenthub_env_webarena.shop.tasks import SPLITS, generate_tasks, tasks_dir, write_tasks
from agenthub_env_webarena.task_config import WebArenaTask, fill_task, load_tasks

TASKS = {split: load_tasks(tasks_dir(split)) for split in SPLITS}


def test_the_catalogue_and_the_tasks_regenerate_byte_for_byte(tmp_path: Path) -> None:
    catalog = generate_catalog()
    assert dump_catalog(catalog) == CATALOG_FILE.read_text(encoding="utf-8")
    write_tasks(generate_tasks(catalog), tmp_path)
    for split in SPLITS:
        shipped = sorted(p.name for p in tasks_dir(split).glob("*.json"))
        assert sorted(p.name for p in (tmp_path / split).glob("*.json")) == shipped
        _, mismatch, errors = filecmp.cmpfiles(tasks_dir(split), tmp_path / split, shipped, shallow=False)
        assert mismatch == [] and errors == []


def test_every_task_is_a_valid_webarena_config_and_the_splits_cover_every_eval_type() -> None:
    everything = [t for split in SPLITS for t in TASKS[split]]
    assert len(everything) >= 300
    assert len({t.task_id for t in everything}) == len(everything)
    assert len(TASKS["test"]) >= 0.15 * len(everything)
    for split in SPLITS:
        kinds = Counter(t.eval_types[0] for t in TASKS[split])
        assert set(kinds) == {"string_match", "url_match", "program_html"}, kinds
        for task in TASKS[split]:
            assert task.start_url == "__SHOPPING__" and task.sites == ("shopping",)
            assert WebArenaTask.from_json(task.raw).raw == task.raw  # round-trips, extra keys included
            assert task.raw["oracle"]["kind"] in ("answer", "navigate", "add_to_cart", "place_order", "update_account")


def sample() -> list[WebArenaTask]:
    """Per split, one task of each oracle kind (so every eval type): small, so the whole file stays fast."""
    rng = random.Random(0)
    chosen = []
    for split in SPLITS:
        by_kind: dict[str, list[WebArenaTask]] = {}
        for task in TASKS[split]:
            by_kind.setdefault(task.raw["oracle"]["kind"], []).append(task)
        for kind in sorted(by_kind):
            chosen.append(rng.choice(by_kind[kind]))
    return chosen


# One pooled client for the file: a fresh client per request costs more than the request.
http = httpx.Client(trust_env=False, timeout=30)


@pytest.fixture(scope="module")
def shop() -> Iterator[str]:
    url, stop = start_shop()
    yield url
    stop()
    http.close()


def drive(session: str, oracle: dict[str, Any]) -> str:
    """Make the state the task asks for with HTTP calls; the page to end on and the answer."""
    kind = oracle["kind"]
    if kind in ("add_to_cart", "place_order"):
        data = {"product_id": str(oracle["product_id"]), "qty": str(oracle["qty"]), **oracle["options"]}
        assert http.post(f"{session}/cart/add", data=data).status_code == 303
        if kind == "place_order":
            order = {"name": "Emma Lopez", "address": "101 S San Mateo Dr", "shipping": oracle["shipping"]}
            assert http.post(f"{session}/checkout", data=order).status_code == 303
    elif kind == "update_account":
        fields = {k.lower(): v for k, v in oracle["fields"].items()}
        assert http.post(f"{session}/account", data=fields).status_code == 303
    return session + str(oracle.get("path", "/"))


@pytest.mark.parametrize("task", sample(), ids=lambda t: f"{t.task_id}-{t.raw['oracle']['kind']}")
def test_the_evaluators_score_the_reference_state_1_and_a_fresh_session_0(
    shop: str, page: Any, task: WebArenaTask
) -> None:
    session = new_session_site(shop)
    try:
        filled = fill_task(task, {"shopping": session})  # the file unchanged, the site through the mapping
        helpers = shop_helpers(session)
        page.goto(drive(session, task.raw["oracle"]))
        answer = task.raw["eval"].get("reference_answer_raw_annotation", "")
        right = evaluate(filled, answer=answer, page=page, helpers=helpers)
        assert right.score == 1.0, right.checks
        reset_session_site(session)
        page.goto(session + "/")
        wrong = evaluate(filled, answer="I could not find it", page=page, helpers=helpers)
        assert wrong.score == 0.0, wrong.checks
    finally:
        close_session_site(session)


def test_every_task_s_oracle_block_solves_it_on_the_site() -> None:
    """All tasks, through the real app in process (no sockets, no browser): what the oracle block says to do
    is possible on the site and meets the task's own reference (answers, URL, required page contents)."""
    from fastapi.testclient import TestClient

    from agenthub_env_webarena.evaluators import url_match
    from agenthub_env_webarena.shop.app import SECRET_HEADER, create_app

    app = create_app()
    with TestClient(app, follow_redirects=False, headers={SECRET_HEADER: app.state.secret}) as client:
        site = client.post("/_sessions").json()["base_url"]
        token = site.rsplit("/", 1)[1]
        for task in TASKS["train"] + TASKS["test"]:
            filled = fill_task(task, {"shopping": site})
            oracle = task.raw["oracle"]
            where = f"task {task.task_id}"
            if oracle["kind"] in ("answer", "navigate"):
                shown = client.get(site + oracle["path"])
                assert shown.status_code == 200, where
                if oracle["kind"] == "answer":
                    # The block names what to read, not the answer: the annotated answer must be on that page.
                    answer = task.raw["eval"]["reference_answer_raw_annotation"]
                    assert evaluate(filled, answer=answer, page=None).score == 1.0, where
                    wording = {"Yes": "Availability: In stock", "No": "Availability: Out of stock"}
                    assert wording.get(answer, answer) in html.unescape(shown.text), where
                else:
                    assert url_match(filled, site + oracle["path"]) == 1.0, where
            else:
                client.post(f"/_sessions/{token}/reset")  # each state task starts from the template
                if oracle["kind"] == "update_account":
                    done = client.post(site + "/account", data={k.lower(): v for k, v in oracle["fields"].items()})
                else:
                    data = {"product_id": str(oracle["product_id"]), "qty": str(oracle["qty"]), **oracle["options"]}
                    done = client.post(site + "/cart/add", data=data)
                    if oracle["kind"] == "place_order":
                        assert done.status_code == 303, where
                        order = {"name": "Emma Lopez", "address": "1 Main St", "shipping": oracle["shipping"]}
                        done = client.post(site + "/checkout", data=order)
                assert done.status_code == 303, where
                for target in filled.eval["program_html"]:
                    url = target["url"]
                    if url.startswith("func:"):
                        url = client.get(site + "/api/latest-order").json()["url"]
                    text = re.sub(r"<[^>]+>", "\n", client.get(url).text)
                    for wanted in target["required_contents"]["must_include"]:
                        assert wanted in html.unescape(text), (where, wanted)
        client.delete(f"/_sessions/{token}")
