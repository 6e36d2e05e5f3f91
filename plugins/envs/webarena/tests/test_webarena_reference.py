"""Ours against WebArena's own code (tests/reference/, pinned upstream commit) on generated corpora.

Every comparison counts its cases and asserts zero disagreements, except the documented differences of
the README's "Differs from the reference" table, which are counted apart and asserted to be only those.
AGENTHUB_REFERENCE_SCALE=N multiplies the generated corpora (default 1: a few seconds).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import random
import re
import string
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from agenthub.testing import cpu_seconds_at_most

from agenthub_env_webarena.actions import (
    MAX_ID,
    ActionParseError,
    BrowserAction,
    extract_action,
    parse_action,
    parse_action_str,
    playwright_key,
)
from agenthub_env_webarena.evaluators import program_html, string_match, url_match
from agenthub_env_webarena.history import REAL_URLS, UrlMapper, describe, early_stop, node_line
from agenthub_env_webarena.task_config import WebArenaTask, fill_task, load_tasks

REFERENCE = Path(__file__).parent / "reference"
SCALE = int(os.environ.get("AGENTHUB_REFERENCE_SCALE", "1"))
SITES = {
    "reddit": "http://127.0.0.1:9999",
    "shopping": "http://127.0.0.1:7770",
    "shopping_admin": "http://127.0.0.1:7780/admin",
    "gitlab": "http://127.0.0.1:8023",
    "wikipedia": "http://127.0.0.1:8888/wikipedia_en_all_maxi_2022-05/A/User:The_other_Kiwix_guy/Landing",
    "map": "http://127.0.0.1:3000",
    "homepage": "http://127.0.0.1:4399",
}
CONFIGS: list[dict[str, Any]] = json.loads((REFERENCE / "test.raw.json").read_text(encoding="utf-8"))


def reference(name: str) -> ModuleType:
    """A module of tests/reference (they import each other by plain name, as upstream's files do)."""
    if str(REFERENCE) not in sys.path:
        sys.path.insert(0, str(REFERENCE))
    return importlib.import_module(name)


def filled(config: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(config)
    for site, url in SITES.items():
        text = text.replace(f"__{site.upper()}__", url)
    return dict(json.loads(text))


# -- config files --------------------------------------------------------------------------------


def test_the_config_folder_loads_as_webarena_s_generate_test_data_leaves_it(tmp_path: Path) -> None:
    raw = (REFERENCE / "test.raw.json").read_text(encoding="utf-8")
    # scripts/generate_test_data.py: test.raw.json, test.json (placeholders filled) and one file per task.
    (tmp_path / "test.raw.json").write_text(raw, encoding="utf-8")
    (tmp_path / "test.json").write_text(json.dumps([filled(c) for c in CONFIGS]), encoding="utf-8")
    for index, config in enumerate(CONFIGS):
        (tmp_path / f"{index}.json").write_text(json.dumps(filled(config), indent=2), encoding="utf-8")
    tasks = load_tasks(tmp_path)
    assert [t.task_id for t in tasks] == list(range(812))
    assert all(Path(t.source).name == f"{t.task_id}.json" for t in tasks)  # the per-task files win
    assert all(t.raw == filled(CONFIGS[t.task_id]) for t in tasks)


def test_every_webarena_config_loads_and_fills() -> None:
    tasks = [WebArenaTask.from_json(c, source=f"test.raw.json[{i}]") for i, c in enumerate(CONFIGS)]
    assert len(tasks) == 812
    for task in tasks:
        assert dict(fill_task(task, SITES).raw) == filled(dict(task.raw))


# -- string_match --------------------------------------------------------------------------------

AFFIXES = [
    ("", ""), ("", "."), ("", ".5"), ("0.", ""), ("", "-star"), ("", "/5"), ("", ":00"), ("1,", "00"), ("+", ""),
    ("(", ")"), ('"', '"'), ("'", "'"), ("the answer is ", "."), ("it is ", ". next"), ("", ". 5 more"),
    ("", "!"), ("", "?"), ("“", "”"), ("", "'s"), ("$", ""), ("", "%"), ("#", ""), ("", " "), ("  ", "\n"),
    ("", "..."), ("", " i.e. 0"), ("", "--"), ("a. ", ""), ("", ";"), ("", ","), ("x", ""), ("", "0"),
]  # fmt: skip


def perturb(text: str, rng: random.Random) -> Iterator[str]:
    """Candidate answers around a reference: affixes, case, and one random edit."""
    for before, after in AFFIXES:
        yield before + text + after
    yield text.upper()
    yield text.title()
    yield text.replace(" ", "")
    yield text.replace(",", "")
    yield text[:-1]
    yield text + " and " + text
    if text:
        at = rng.randrange(len(text) + 1)
        yield text[:at] + rng.choice(string.punctuation + string.digits + " .") + text[at:]
        yield text[:at] + text[at + 1 :]


def answers_for(config: dict[str, Any], rng: random.Random) -> Iterator[str]:
    references = config["eval"]["reference_answers"]
    values: list[str] = []
    for value in references.values():
        values.extend(value if isinstance(value, list) else [value])
    values = [str(v) for v in values]
    yield ""
    yield "N/A"
    yield ", ".join(values)
    yield " and ".join(reversed(values))
    for _ in range(SCALE):
        for value in values:
            yield from perturb(value, rng)
        yield from perturb(", ".join(values), rng)


def test_string_match_agrees_with_webarena_on_every_string_config() -> None:
    pytest.importorskip("nltk", reason="the reference's word_tokenize is NLTK's (pip install nltk)")
    ref = reference("evaluation_harness_evaluators")
    rng = random.Random(0)
    configs = [
        c
        for c in CONFIGS
        if "string_match" in c["eval"]["eval_types"] and "fuzzy_match" not in c["eval"]["reference_answers"]
    ]
    cases, disagreements = 0, []
    for config in configs:
        task = WebArenaTask.from_json(config)
        for answer in answers_for(config, rng):
            cases += 1
            ours, theirs = string_match(task, answer, None)[0], ref.string_match(config, answer)
            if ours != theirs:
                disagreements.append((config["task_id"], answer, ours, theirs))
    assert len(configs) == 217 and cases > 10_000 * SCALE
    assert disagreements == [], disagreements[:10]


def test_must_include_tokenizes_as_nltk_on_generated_text() -> None:
    pytest.importorskip("nltk", reason="the reference's word_tokenize is NLTK's (pip install nltk)")
    ref = reference("evaluation_harness_evaluators")
    from agenthub_env_webarena.nltk_tokenize import word_tokenize

    alphabet = [*"0165ab.,:;'\"()[]{}<>!?-+/ \n$%&@#*`«»“”’", "...", "--", "n't", "'s", "cannot", "6.5", "i.e. "]  # noqa: RUF001
    rng = random.Random(1)
    cases = 0
    for _ in range(5_000 * SCALE):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        assert word_tokenize(text) == ref.word_tokenize(text), repr(text)
        cases += 1
    assert cases == 5_000 * SCALE


# -- url_match -----------------------------------------------------------------------------------


def url_variants(url: str, rng: random.Random) -> Iterator[str]:
    base, _, query = url.partition("?")
    yield url
    yield url + "/"
    yield url.rstrip("/")
    yield base.rstrip("/") + "/" + ("?" + query if query else "")
    yield base.rstrip("/") + ("?" + query if query else "")
    yield base + "?" + query + ("&" if query else "") + "extra=1"
    yield base + "/sub" + ("?" + query if query else "")
    yield url.upper()
    yield url.replace("http://", "https://")
    yield url.replace("127.0.0.1", "localhost")
    yield base
    yield url + "#top"
    yield url.replace("%20", "+").replace("+", "%20")
    if query:
        pairs = query.split("&")
        rng.shuffle(pairs)
        yield base + "?" + "&".join(pairs)
        yield base + "?" + "&".join(pairs[1:])
        yield base + "?" + query.replace("=", "=x", 1)
    if "/" in base[8:]:
        yield base[: base.rindex("/")]


def test_url_match_agrees_with_webarena_on_every_url_config() -> None:
    ref = reference("evaluation_harness_evaluators")
    rng = random.Random(2)
    configs = [filled(c) for c in CONFIGS if "url_match" in c["eval"]["eval_types"]]
    cases, disagreements = 0, []
    for config in configs:
        task = WebArenaTask.from_json(config)
        references = config["eval"]["reference_url"].split(" |OR| ")
        for _ in range(SCALE):
            for reference_url in references:
                for candidate in url_variants(reference_url, rng):
                    cases += 1
                    ours, theirs = url_match(task, candidate), ref.url_match(config, candidate)
                    if ours != theirs:
                        disagreements.append((config["task_id"], candidate, ours, theirs))
    assert len(configs) == 205 and cases > 2_500 * SCALE
    assert disagreements == [], disagreements[:10]


# -- program_html --------------------------------------------------------------------------------


class TextPage:
    """A page whose content and locator value are given: program_html's scoring alone is compared."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.url = "http://127.0.0.1:7770/last"

    def goto(self, url: str) -> None:
        raise AssertionError(f"the target is the last page; nothing should open {url}")

    def evaluate(self, expression: str) -> Any:
        return self.value

    def content(self) -> str:
        return str(self.value)


def contents_for(required: dict[str, Any], rng: random.Random) -> Iterator[str]:
    values = [str(required["exact_match"])] if "exact_match" in required else []
    for item in required.get("must_include", []):
        values.extend(str(item).split(" |OR| "))
    yield ""
    yield " ".join(values)
    for _ in range(SCALE):
        for value in values:
            yield from perturb(value, rng)
            yield value.replace("&", "&amp;").replace("'", "&#39;")


def test_program_html_scoring_agrees_with_webarena_on_every_target() -> None:
    ref = reference("evaluation_harness_evaluators")
    rng = random.Random(3)
    cases, disagreements, targets = 0, [], 0
    for config in CONFIGS:
        for target in config["eval"].get("program_html", []):
            targets += 1
            spec = {"url": "last", "locator": "", "required_contents": target["required_contents"]}
            data = {**config, "eval": {"eval_types": ["program_html"], "program_html": [spec]}}
            task = WebArenaTask.from_json(data)
            for content in contents_for(target["required_contents"], rng):
                cases += 1
                ours = program_html(task, TextPage(content))[0]
                theirs = ref.program_html_score(target, content)
                if ours != theirs:
                    disagreements.append((config["task_id"], content, ours, theirs))
    assert targets > 500 and cases > 15_000 * SCALE
    assert disagreements == [], disagreements[:10]


@pytest.mark.parametrize("value", [0, 1, 0.5, None, False, True, "", "0", "text", [1, 2]])
def test_a_locator_s_value_becomes_text_as_in_webarena(value: Any) -> None:
    ref = reference("evaluation_harness_evaluators")
    target = {"url": "last", "locator": "document.querySelector('select').selectedIndex", "required_contents": {}}
    target["required_contents"] = {"exact_match": ref.locator_text(value)}
    data = {"task_id": 699, "intent": "x", "start_url": "x", "eval": {"eval_types": ["program_html"]}}
    task = WebArenaTask.from_json({**data, "eval": {"eval_types": ["program_html"], "program_html": [target]}})
    assert program_html(task, TextPage(value))[0] == 1.0
    if value == 0 and type(value) is int:
        assert ref.locator_text(value) == "0"  # tasks 699-703: selectedIndex 0 is "0", not ""


# -- actions -------------------------------------------------------------------------------------

UPSTREAM_ACTIONS = [
    # agent/prompts/raw/*.py examples and tests/test_browser_env/*.py
    "click [1234]", "scroll [down]", "stop [$279.49]", "type [164] [restaurants near CMU] [1]",
    "hover [1234]", "type [12] [hello world] [0]", "press [meta+a]", "type [12] [test@gmail.com] [0]",
    "type [12] [text]", "scroll [up]", "goto [http://onestopmarket.com/electronics.html]", "new_tab",
    "go_back", "go_forward", "close_tab", "tab_focus [1]", "stop [N/A]", "stop",
]  # fmt: skip
UPSTREAM_REPLIES = [
    "Let's think step-by-step. This page list the information of HP Inkjet Fax Machine, which is the product "
    "identified in the objective. Its price is $279.49. I think I have achieved the objective. I will issue the "
    "stop action with the answer. In summary, the next action I will perform is ```stop [$279.49]```",
    "Let's think step-by-step. This page has a search box whose ID is [164]. According to the nominatim rule of "
    'openstreetmap, I can search for the restaurants near a location by "restaurants near". I can submit my '
    "typing by pressing the Enter afterwards. In summary, the next action I will perform is "
    "```type [164] [restaurants near CMU] [1]```",
]
NAMES = ["click", "hover", "type", "press", "scroll", "goto", "tab_focus", "stop", "new_tab", "go_back",
         "go_forward", "close_tab", "Click", "typ", "type "]  # fmt: skip
PIECES = [" ", "[", "]", "[1]", "[0]", "[12]", "[007]", "[٣]", " [", "] [", "\n", "a", "up", "down", "enter",
          "arrowdown", "Meta+a", "+", "x y", "[" + "9" * 12 + "]", "type", "click [3]", "]]", "[[", "\t", "é",
          "€"]  # fmt: skip


def generated_actions(rng: random.Random, count: int) -> Iterator[str]:
    yield from UPSTREAM_ACTIONS
    yield from ("", "  \n ", "```")
    for _ in range(count):
        yield rng.choice(NAMES) + "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 7)))


def normalized(action: dict[str, Any], ref: ModuleType) -> tuple[Any, ...]:
    """A reference action as (kind, id, text, enter, index) in our terms."""
    kind = ref.ActionTypes(action["action_type"])
    names = {
        ref.ActionTypes.CLICK: "click", ref.ActionTypes.HOVER: "hover", ref.ActionTypes.TYPE: "type",
        ref.ActionTypes.KEY_PRESS: "press", ref.ActionTypes.SCROLL: "scroll", ref.ActionTypes.GOTO_URL: "goto",
        ref.ActionTypes.PAGE_FOCUS: "tab_focus", ref.ActionTypes.STOP: "stop", ref.ActionTypes.NEW_TAB: "new_tab",
        ref.ActionTypes.GO_BACK: "go_back", ref.ActionTypes.GO_FORWARD: "go_forward",
        ref.ActionTypes.PAGE_CLOSE: "close_tab",
    }  # fmt: skip
    name = names[kind]
    element = int(action["element_id"]) if action["element_id"] else None
    if name == "type":
        typed = "".join(ref._id2key[i] for i in action["text"])
        enter = typed.endswith("\n")
        return name, element, typed[:-1] if enter else typed, enter, None
    text = {"press": action["key_comb"], "scroll": action["direction"], "goto": action["url"]}.get(name, "")
    text = action["answer"] if name == "stop" else text
    return name, element, text, False, action["page_number"] if name == "tab_focus" else None


def ours_normalized(action: BrowserAction) -> tuple[Any, ...]:
    return action.kind, action.element_id, action.text, action.enter, action.index


def test_actions_parse_as_webarena_s_create_id_based_action() -> None:
    ref = reference("browser_env_actions")
    rng = random.Random(4)
    cases, disagreements = 0, []
    documented = {"id out of range": 0, "text outside WebArena's charset": 0, "empty action": 0}
    for action_str in generated_actions(rng, 20_000 * SCALE):
        cases += 1
        try:
            theirs: tuple[Any, ...] | str = normalized(ref.create_id_based_action(action_str), ref)
        except ref.ActionParsingError:
            theirs = "invalid"
        except KeyError:  # _keys2ids: a typed character outside its charset crashes WebArena's episode
            theirs = "crash: charset"
        except IndexError:  # "".split()[0]
            theirs = "crash: empty"
        except ValueError:  # int() of a tab index beyond Python's digit limit
            theirs = "crash: int"
        try:
            ours: tuple[Any, ...] | str = ours_normalized(parse_action_str(action_str))
        except ActionParseError as exc:
            ours = "invalid" if "out of range" not in str(exc) else "out of range"
        if ours == theirs:
            continue
        past_cap = isinstance(theirs, tuple) and int(theirs[1] or theirs[4] or 0) > MAX_ID
        if ours == "out of range" and (past_cap or theirs in ("crash: int", "crash: charset")):
            documented["id out of range"] += 1
        elif theirs == "crash: charset" and isinstance(ours, tuple):
            documented["text outside WebArena's charset"] += 1
        elif theirs == "crash: empty" and ours == "invalid":
            documented["empty action"] += 1
        else:
            disagreements.append((action_str, ours, theirs))
    assert cases > 20_000 * SCALE
    assert disagreements == [], disagreements[:10]
    assert all(documented.values()), documented  # the corpus does reach each documented difference


def test_replies_give_up_their_first_fenced_block_as_webarena_s_extract_action() -> None:
    ref = reference("agent_and_run")
    rng = random.Random(5)
    replies = [*UPSTREAM_REPLIES, "```click [1]``` then ```click [2]```", "a ``` b", "``````", "```a\nb```"]
    pieces = ["```", "`", "click [1]", "\n", " ", "x", "``"]
    replies += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(5_000 * SCALE)]
    refused = 0
    for reply in replies:
        try:
            theirs = ref._extract_action(reply)
        except ref.ActionParsingError:  # no fenced block: a parse failure, here too (by default)
            with pytest.raises(ActionParseError, match="no action in a pair of"):
                extract_action(reply)
            assert extract_action(reply, bare=True) == reply.strip()  # bare_actions (off by default)
            refused += 1
            continue
        assert extract_action(reply) == theirs, repr(reply)
        assert extract_action(reply, bare=True) == theirs, repr(reply)
    assert 0 < refused < len(replies)  # the corpus reaches both sides
    assert parse_action(UPSTREAM_REPLIES[1]) == BrowserAction("type", 164, "restaurants near CMU", enter=True)


@pytest.mark.parametrize("key", ["enter", "arrowdown", "meta+a", "Meta+A", "control+a", "f12", "Shift+Tab", "x"])
def test_keys_map_and_press_as_in_webarena(key: str) -> None:
    ref = reference("browser_env_actions")
    mapped = ref.create_key_press_action(key)["key_comb"]
    assert parse_action(f"```press [{key}]```").text == mapped
    for platform in ("Linux x86_64", "MacIntel"):
        assert playwright_key(mapped, platform) == ref.execute_key_press(mapped, platform)


def test_previous_action_is_webarena_s_action_description() -> None:
    ref = reference("agent_and_run")
    acts = reference("browser_env_actions")
    rng = random.Random(6)
    splitter = {"meta_data": {"action_splitter": "```"}}
    nodes = {"5": {"text": "[5] link 'Products'"}, "12": {"text": "[12] textbox 'Search' required: False"}}
    tree = "\t[5] link 'Products'\n\t\t[12] textbox 'Search' required: False"
    cases = 0
    for action_str in generated_actions(rng, 5_000 * SCALE):
        try:
            theirs_action = acts.create_id_based_action(action_str)
        except (acts.ActionParsingError, KeyError, IndexError, ValueError):
            continue
        try:
            ours_action = parse_action_str(action_str)
        except ActionParseError:
            continue  # out of range: counted by the parser's comparison
        theirs = ref.get_action_description(
            theirs_action, {"text": {"obs_nodes_info": nodes}}, "id_accessibility_tree", splitter
        )
        element = ours_action.element_id
        line = node_line(tree, element) if element is not None else None
        if str(element) != theirs_action["element_id"] and theirs_action["element_id"]:
            continue  # "007" / "٣": WebArena looks the string up, we the number (documented)
        assert describe(ours_action, action_str, line) == theirs, repr(action_str)
        cases += 1
    none = acts.create_none_action()
    none["raw_prediction"] = "I will click it"
    assert describe(None, "I will click it", None) == ref.get_action_description(
        none, {"text": {"obs_nodes_info": {}}}, "id_accessibility_tree", splitter
    )
    assert cases > 1_000 * SCALE


def test_early_stop_agrees_with_run_py() -> None:
    ref = reference("agent_and_run")
    acts = reference("browser_env_actions")
    rng = random.Random(7)
    pool = ["click [1]", "click [2]", "type [1] [a]", "type [1] [b] [0]", "type [2] [a]", "scroll [down]", None]
    cases = 0
    for _ in range(3_000 * SCALE):
        sequence = [rng.choice(pool) for _ in range(rng.randint(0, 9))]
        max_steps = rng.randint(1, 10)
        trajectory: list[Any] = [{}]
        ours_actions: list[BrowserAction | None] = []
        for item in sequence:
            trajectory += [acts.create_none_action() if item is None else acts.create_id_based_action(item), {}]
            ours_actions.append(None if item is None else parse_action_str(item))
        flag, reason = ref.early_stop(trajectory, max_steps, {"parsing_failure": 3, "repeating_action": 3})
        assert early_stop(ours_actions, max_steps) == (reason if flag else ""), (sequence, max_steps)
        cases += 1
    assert cases == 3_000 * SCALE


def test_the_env_s_defaults_are_webarena_s() -> None:
    """The two options that differ from WebArena are off by default: fenced actions only, real-world URLs."""
    import inspect

    from agenthub_env_webarena.env import WebArenaEnv

    parameters = inspect.signature(WebArenaEnv).parameters
    assert parameters["bare_actions"].default is False  # a reply with no ``` block: a parse failure
    assert parameters["real_urls"].default is True  # the URL line: URL_MAPPINGS' real-world names


def test_urls_map_to_webarena_s_real_world_names_and_back() -> None:
    ref = reference("agent_and_run")
    mapping = {SITES[site]: real for site, real in REAL_URLS.items()}
    mapper = UrlMapper(SITES)
    rng = random.Random(8)
    hosts = [*SITES.values(), *REAL_URLS.values(), "https://onestopmarket.com", "http://example.com"]
    for _ in range(3_000 * SCALE):
        text = "goto [" + rng.choice(hosts) + rng.choice(["", "/", "/a?b=1", "/admin"]) + "]"
        assert mapper.to_local(text) == ref.map_url_to_local(text, mapping)
        url = rng.choice(hosts) + rng.choice(["", "/", "/x.html"])
        assert mapper.to_real(url) == ref.map_url_to_real(url, mapping)


# -- hostile input (issue 27) -------------------------------------------------------------------

PATHOLOGICAL = [
    "type [1] [" * 100_000 + "[1]",
    "click [" + "9" * 1_000_000 + "]",
    "press [" * 150_000,
    "type [1] [" + "] [" * 300_000,
    "stop [" + "a]" * 500_000,
    ("type [1] [x] [" + "1" * 50 + "\n") * 15_000,
    "scroll " * 150_000,
    "```" * 300_000,
]


@pytest.mark.parametrize("shape", range(len(PATHOLOGICAL)))
def test_a_megabyte_of_hostile_action_parses_in_linear_time(shape: int) -> None:
    text = PATHOLOGICAL[shape]
    assert len(text) >= 900_000
    with cpu_seconds_at_most(1.0, f"hostile shape {shape}"):
        with pytest.raises(ActionParseError, match="more than the 4096"):
            parse_action(text)
        with contextlib.suppress(ActionParseError):  # and without the length cap: the scanner itself is linear
            parse_action(text, max_chars=len(text), bare=True)


def test_an_id_past_the_cap_is_an_invalid_action_not_an_error() -> None:
    with pytest.raises(ActionParseError, match="out of range"):
        parse_action("```click [" + "5" * 5000 + "]```", max_chars=10_000)
    with pytest.raises(ActionParseError, match="out of range"):
        parse_action(f"```tab_focus [{MAX_ID + 1}]```")
    assert parse_action(f"```click [{MAX_ID}]```").element_id == MAX_ID
    assert re.fullmatch(r"\d+", str(MAX_ID))
