"""WebArena's evaluators on hand-made cases: every eval type, every reference kind, the judge pluggable.

The cases follow WebArena's own semantics (evaluation_harness/evaluators.py); url_match and
program_html run against real pages in Chromium.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agenthub_env_webarena.evaluators import clean_answer, evaluate, must_include, reddit_get_post_url
from agenthub_env_webarena.judge import JudgeError, OpenAIJudge
from agenthub_env_webarena.task_config import WebArenaTask


def task(eval_spec: dict[str, Any], intent: str = "What is asked?") -> WebArenaTask:
    return WebArenaTask.from_json({"task_id": 1, "intent": intent, "start_url": "http://x", "eval": eval_spec})


def strings(answers: dict[str, Any], **extra: Any) -> WebArenaTask:
    return task({"eval_types": ["string_match"], "reference_answers": answers, **extra})


@pytest.mark.parametrize(
    ("answers", "answer", "score"),
    [
        ({"exact_match": "Pittsburgh"}, " 'pittsburgh' ", 1.0),  # quotes, case and spaces are cleaned
        ({"exact_match": "Pittsburgh"}, "Pittsburgh, PA", 0.0),
        ({"must_include": ["Joseph Brzezinski", "Catso"]}, "catso and joseph brzezinski", 1.0),
        ({"must_include": ["Joseph Brzezinski", "Catso"]}, "Catso", 0.0),
        ({"must_include": ["0"]}, "10", 0.0),  # a lone one-character reference must be a whole token
        ({"must_include": ["0"]}, "there are 0 reviews", 1.0),
        ({"must_include": ["0"]}, "0.5", 0.0),  # NLTK keeps 6.5, 6-star, 6/5, 6:00, 1,600, +6 whole
        ({"must_include": ["6"]}, "6-star", 0.0),
        ({"must_include": ["6"]}, "1,600 and 6:00 and 6/5 and +6", 0.0),
        ({"must_include": ["0"]}, "the count is 0. 5 more", 1.0),  # Punkt ends the sentence: "0" "."
        ({"must_include": ["0"]}, "it is 0. it is", 0.0),  # ...but not before a lower-case word: "0."
        ({"must_include": ["0", "1"]}, "10", 1.0),  # with two references, substrings as in WebArena
        ({"exact_match": "N/A", "must_include": ["N/A"]}, "n/a", 1.0),
    ],
)
def test_string_match(answers: dict[str, Any], answer: str, score: float) -> None:
    verdict = evaluate(strings(answers), answer=answer, page=None)
    assert verdict.score == score and verdict.not_evaluated == []


def test_clean_answer_and_must_include_follow_webarena() -> None:
    assert clean_answer('"Yes"') == "yes" and clean_answer("'a'b'") == "a'b" and clean_answer("'") == "'"
    assert must_include("abc", "xxABCxx") == 1.0 and must_include("a", "b a c", tokenize=True) == 1.0


def test_fuzzy_match_without_a_judge_is_not_evaluated_never_passed_or_failed() -> None:
    verdict = evaluate(strings({"fuzzy_match": ["about 3 miles"]}), answer="three miles", page=None)
    assert verdict.score is None
    assert verdict.not_evaluated and "env_kwargs.judge.base_url" in verdict.not_evaluated[0]
    # Another check that already failed decides: the product is 0 whatever the judge would say.
    both = strings({"must_include": ["4"], "fuzzy_match": ["about 3 miles"]})
    assert evaluate(both, answer="three miles", page=None).score == 0.0
    # A blank answer is not sent to a judge (WebArena): it fails a non-blank reference.
    assert evaluate(strings({"fuzzy_match": ["x"]}), answer="", page=None).score == 0.0
    # "N/A" references match exactly first; only a different answer needs the judge.
    assert evaluate(strings({"fuzzy_match": "N/A"}), answer="N/A", page=None).score == 1.0
    assert evaluate(strings({"fuzzy_match": "N/A"}, string_note="no such order"), answer="x", page=None).score is None


class JudgeHandler(BaseHTTPRequestHandler):
    """A stand-in for an LLM behind an OpenAI-compatible endpoint (no model can judge on this machine): it
    answers WebArena's two prompts by a rule the tests state, and records what it was sent."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        JudgeHandler.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        prompt = body["messages"][-1]["content"]
        if "student answer: garbled" in prompt:
            reply = "I cannot tell."
        elif "Conclude the judgement" in prompt:
            student = prompt.split("student answer: ")[1].split("\n")[0]
            reply = "The answer is correct." if "3" in student or "three" in student else "incorrect"
        else:
            reply = "[same]" if "closed" in prompt.split("Report_1 = ")[1] else "[different]"
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def judge_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), JudgeHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_fuzzy_match_asks_the_configured_judge_with_webarenas_prompt(judge_url: str) -> None:
    judge = OpenAIJudge.from_settings({"base_url": judge_url, "model": "judge-model", "api_key": "k"})
    assert judge is not None
    spec = strings({"fuzzy_match": ["about 3 miles"]})
    assert evaluate(spec, answer="three miles", page=None, judge=judge).score == 1.0
    assert evaluate(spec, answer="ten miles", page=None, judge=judge).score == 0.0
    sent = JudgeHandler.requests[-1]
    assert sent["path"] == "/v1/chat/completions" and sent["model"] == "judge-model" and sent["temperature"] == 0
    assert sent["auth"] == "Bearer k" and "reference answer: about 3 miles" in sent["messages"][1]["content"]
    unachievable = strings({"fuzzy_match": "N/A"}, string_note="the store is closed")
    assert evaluate(unachievable, answer="cannot: it is closed", page=None, judge=judge).score == 1.0
    assert evaluate(unachievable, answer="the price is 3", page=None, judge=judge).score == 0.0
    with pytest.raises(JudgeError, match="neither correct nor incorrect"):
        evaluate(spec, answer="garbled", page=None, judge=judge)


def test_a_judge_needs_a_model_and_a_reachable_endpoint() -> None:
    assert OpenAIJudge.from_settings(None) is None and OpenAIJudge.from_settings({}) is None
    with pytest.raises(ValueError, match=r"judge\.model is missing"):
        OpenAIJudge.from_settings({"base_url": "http://127.0.0.1:9/v1"})
    judge = OpenAIJudge("http://127.0.0.1:9/v1", "m", timeout_s=2)
    with pytest.raises(JudgeError, match="cannot reach the judge"):
        judge.fuzzy_match("a", "b", "q")


def test_url_match_on_a_real_page(site: tuple[str, Path], page: Any) -> None:
    base, root = site
    (root / "review").mkdir(exist_ok=True)
    (root / "review" / "list.html").write_text("<html><body>reviews</body></html>")
    spec = task({"eval_types": ["url_match"], "reference_url": f"{base}/review/list.html?sku=7 |OR| {base}/other"})
    page.goto(f"{base}/review/list.html?sku=7&page=2")
    assert evaluate(spec, answer="", page=page).score == 1.0
    page.goto(f"{base}/review/list.html?sku=8")
    assert evaluate(spec, answer="", page=page).score == 0.0  # the reference's query value is missing
    page.goto(f"{base}/review/")
    assert evaluate(spec, answer="", page=page).score == 0.0


def test_program_html_locators_and_required_contents_on_real_pages(site: tuple[str, Path], page: Any) -> None:
    base, root = site
    (root / "cart.html").write_text(
        "<html><body><h1>Cart</h1><ul id='items'><li class='item'>Blue mug x 2</li>"
        "<li class='item'>Tea &amp; honey</li></ul></body></html>"
    )
    (root / "order.html").write_text("<html><body><span id='status'>Pending</span></body></html>")
    spec = task(
        {
            "eval_types": ["program_html"],
            "program_html": [
                {
                    "url": f"{base}/cart.html",
                    "locator": "[...document.querySelectorAll('.item')].map(e => e.textContent).join(' | ')",
                    "required_contents": {"must_include": ["Blue mug x 2", "Tea & honey |OR| Tea and honey"]},
                },
                {
                    "url": "last",
                    "locator": "document.querySelector('#status').textContent",
                    "required_contents": {"exact_match": "pending"},
                },
                {"url": f"{base}/cart.html", "locator": "", "required_contents": {"must_include": ["<h1>Cart</h1>"]}},
            ],
        }
    )
    page.goto(f"{base}/order.html")
    verdict = evaluate(spec, answer="", page=page)
    assert verdict.score == 1.0, verdict.checks
    # "last" is the page the episode ended on, read before any target navigates away.
    page.goto(f"{base}/cart.html")
    assert evaluate(spec, answer="", page=page).score == 0.0  # no #status there: the locator selects nothing


def test_program_html_helpers_are_called_not_evaluated(site: tuple[str, Path], page: Any) -> None:
    base, root = site
    (root / "f").mkdir(exist_ok=True)
    (root / "order.html").write_text("<html><body><span id='status'>Pending</span></body></html>")
    spec = task(
        {
            "eval_types": ["program_html"],
            "program_html": [
                {
                    "url": "func:latest_order_url()",
                    "locator": "func:order_status(__page__)",
                    "required_contents": {"exact_match": "Pending"},
                }
            ],
        }
    )
    helpers = {
        "latest_order_url": lambda: f"{base}/order.html",
        "order_status": lambda p: p.evaluate("() => document.querySelector('#status').textContent"),
    }
    page.goto(base)
    assert evaluate(spec, answer="", page=page, helpers=helpers).score == 1.0
    verdict = evaluate(spec, answer="", page=page)  # this deployment has no such helpers
    assert verdict.score is None and "helper 'latest_order_url' is not available" in verdict.not_evaluated[0]
    target = spec.eval["program_html"][0]
    builtin = task({**spec.eval, "program_html": [{**target, "url": "func:__import__('os')"}]})
    assert "helper '__import__' is not available" in evaluate(builtin, answer="", page=page).not_evaluated[0]
    call = task({**spec.eval, "program_html": [{**target, "url": "func:latest_order_url(os.system('true'))"}]})
    with pytest.raises(ValueError, match="arguments must be literals"):
        evaluate(call, answer="", page=page, helpers=helpers)


def test_reddit_get_post_url_cuts_a_comment_url_to_its_post() -> None:
    assert reddit_get_post_url("http://r:9999/f/books/59421/a-title/comment/1") == "http://r:9999/f/books/59421/"
    assert reddit_get_post_url("http://r:9999/forums") == "http://r:9999/forums"


def test_string_and_url_checks_multiply_as_in_webarena(site: tuple[str, Path], page: Any) -> None:
    base, root = site
    (root / "a.html").write_text("<html><body>a</body></html>")
    spec = task(
        {"eval_types": ["string_match", "url_match"], "reference_answers": {"exact_match": "7"},
         "reference_url": f"{base}/a.html"}
    )  # fmt: skip
    page.goto(f"{base}/a.html")
    assert evaluate(spec, answer="7", page=page).score == 1.0
    assert evaluate(spec, answer="8", page=page).score == 0.0
    with pytest.raises(ValueError, match="url_match needs the final page"):
        evaluate(spec, answer="7", page=None)
