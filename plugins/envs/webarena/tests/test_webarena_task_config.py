"""WebArena config files: read as WebArena writes them, placeholders filled from a sites mapping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agenthub_env_webarena.task_config import TaskConfigError, WebArenaTask, fill_task, load_tasks, site_urls

# The shape of WebArena's config_files/0.json (a shopping_admin string_match task), trimmed.
CONFIG: dict[str, Any] = {
    "sites": ["shopping"],
    "task_id": 21,
    "require_login": True,
    "storage_state": "./.auth/shopping_state.json",
    "start_url": "__SHOPPING__/6s-wireless-headphones-over-ear.html",
    "geolocation": None,
    "intent_template": "List out reviewers, if exist, who mention about {{description}}",
    "instantiation_dict": {"description": "ear cups being small"},
    "intent": "List out reviewers, if exist, who mention about ear cups being small",
    "require_reset": False,
    "eval": {
        "eval_types": ["string_match", "url_match"],
        "reference_answers": {"must_include": ["Joseph Brzezinski", "Catso"]},
        "reference_url": "__SHOPPING__/6s-wireless-headphones-over-ear.html |OR| __SHOPPING__/review/list",
        "program_html": [],
        "string_note": "",
    },
    "intent_template_id": 222,
}


def write(directory: Path, name: str, data: Any) -> None:
    (directory / name).write_text(json.dumps(data))


def test_a_folder_of_configs_loads_by_task_id_and_keeps_every_key(tmp_path: Path) -> None:
    write(tmp_path, "21.json", CONFIG)
    write(tmp_path, "more.json", [{**CONFIG, "task_id": 3}, {**CONFIG, "task_id": 40}])
    tasks = load_tasks(tmp_path)
    assert [t.task_id for t in tasks] == [3, 21, 40]
    task = tasks[1]
    assert task.sites == ("shopping",) and task.require_login and task.eval_types == ("string_match", "url_match")
    assert task.raw["intent_template_id"] == 222 and task.raw == CONFIG


def test_placeholders_are_filled_from_the_sites_mapping_or_webarenas_variables() -> None:
    task = WebArenaTask.from_json(CONFIG)
    urls = site_urls({"shopping": "http://127.0.0.1:7770/"}, environ={})
    filled = fill_task(task, urls)
    assert filled.start_url == "http://127.0.0.1:7770/6s-wireless-headphones-over-ear.html"
    assert filled.eval["reference_url"].endswith(" |OR| http://127.0.0.1:7770/review/list")
    assert site_urls(environ={"SHOPPING": "http://shop:7770", "GITLAB": "http://git:8023"}) == {
        "shopping": "http://shop:7770",
        "gitlab": "http://git:8023",
    }
    # The mapping wins over the variable.
    assert site_urls({"shopping": "http://a"}, environ={"SHOPPING": "http://b"}) == {"shopping": "http://a"}


def test_a_missing_site_names_the_setting_and_the_variable() -> None:
    with pytest.raises(TaskConfigError, match=r"env_kwargs.sites.shopping=URL or set SHOPPING"):
        fill_task(WebArenaTask.from_json(CONFIG), {})
    with pytest.raises(TaskConfigError, match="unknown site 'shop'"):
        site_urls({"shop": "http://x"}, environ={})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"task_id": "21"}, "task_id must be an integer"),
        ({"task_id": True}, "task_id must be an integer"),
        ({"eval": {**CONFIG["eval"], "eval_types": ["visual_match"]}}, "eval_type 'visual_match' is not supported"),
        ({"eval": {**CONFIG["eval"], "reference_answers": {"regex": "x"}}}, "reference answer kind 'regex'"),
        ({"eval": {**CONFIG["eval"], "reference_url": None}}, "url_match needs eval.reference_url"),
        ({"eval": []}, "'eval' must be an object"),
    ],
)
def test_bad_configs_are_refused_with_what_is_wrong(change: dict[str, Any], message: str) -> None:
    with pytest.raises(TaskConfigError, match=message):
        WebArenaTask.from_json({**CONFIG, **change}, source="bad.json")


def test_a_missing_key_and_a_bad_folder_are_named(tmp_path: Path) -> None:
    data = {k: v for k, v in CONFIG.items() if k != "intent"}
    with pytest.raises(TaskConfigError, match=r"bad\.json: missing 'intent'"):
        WebArenaTask.from_json(data, source="bad.json")
    with pytest.raises(TaskConfigError, match="is not a directory"):
        load_tasks(tmp_path / "nowhere")
    with pytest.raises(TaskConfigError, match="no task configs"):
        load_tasks(tmp_path)
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(TaskConfigError, match=r"x\.json: not JSON"):
        load_tasks(tmp_path)


def test_a_task_id_in_two_files_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "a.json", CONFIG)
    write(tmp_path, "b.json", CONFIG)
    with pytest.raises(TaskConfigError, match="task_id 21 is in both"):
        load_tasks(tmp_path)


def test_webarena_s_generated_folder_loads_its_per_task_files(tmp_path: Path) -> None:
    # scripts/generate_test_data.py leaves test.raw.json and test.json (lists) beside 0.json, 1.json, ...
    configs = [{**CONFIG, "task_id": i} for i in range(3)]
    (tmp_path / "test.raw.json").write_text(json.dumps(configs), encoding="utf-8")
    (tmp_path / "test.json").write_text(json.dumps([{**c, "intent": "filled"} for c in configs]), encoding="utf-8")
    for config in configs[:2]:
        (tmp_path / f"{config['task_id']}.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(TaskConfigError, match=r"task_id 2 is in both .*test\.json and .*test\.raw\.json"):
        load_tasks(tmp_path)  # id 2 has no file of its own and its two aggregates differ
    (tmp_path / "2.json").write_text(json.dumps(configs[2]), encoding="utf-8")
    tasks = load_tasks(tmp_path)
    assert [(t.task_id, Path(t.source).name) for t in tasks] == [(0, "0.json"), (1, "1.json"), (2, "2.json")]
    (tmp_path / "test.json").unlink()
    (tmp_path / "2.json").unlink()
    assert Path(load_tasks(tmp_path)[2].source).name == "test.raw.json"  # an aggregate fills in missing ids
