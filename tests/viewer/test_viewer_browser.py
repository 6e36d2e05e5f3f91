"""The viewer in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

What a user does and sees: open the page, read the episode count, filter by outcome and by task,
open an episode and read its replay and its tokens, read the per-task table and the learning
curves; the same in the report opened from disk. Screenshots go to each test's tmp_path and to
``$AGENTHUB_SCREENSHOT_DIR`` when set. Without Chromium or Playwright the tests skip, except under
CI (``AGENTHUB_REQUIRE_PLUGIN_TESTS=1``), where they fail.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenthub import Outcome, Trajectory
from agenthub.rollout.store import RunStore
from agenthub.viewer.report import write_report

from .conftest import CHROMIUM, STEPS, TOKEN_RUN, running_view, skip_or_fail
from .test_viewer_report import HOSTILE, hostile_run

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("Playwright is not installed (pip install playwright; the browser is Debian's chromium)")
    if not Path(CHROMIUM).exists():
        skip_or_fail(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; any JavaScript error on it fails the test (a user would meet a broken page)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    yield tab
    context.close()
    assert not errors, f"the page logged errors: {errors}"


@pytest.fixture(scope="module")
def view_url(runs_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_view(runs_root, tmp_path_factory.mktemp("view") / "ready.json") as url:
        yield url


@pytest.fixture(scope="module")
def report_url(runs_root: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("report") / "report.html"
    write_report(runs_root, out)
    return out.as_uri()


def all_of(n: int) -> str:
    """The pager's text when one page shows all ``n`` episodes (it writes ranges with an en dash)."""
    return f"1\N{EN DASH}{n} of {n} episode{'s' if n != 1 else ''}"


def screenshot(page: Any, dirs: list[Path], name: str) -> None:
    for directory in dirs:
        page.screenshot(path=str(directory / f"{name}.png"), full_page=True)
    assert (dirs[0] / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def token_run(runs_root: Path) -> list[Trajectory]:
    return list(RunStore.existing(runs_root / TOKEN_RUN).trajectories())


def check_list_and_filters(page: Any, base: str, trajectories: list[Trajectory], shots: list[Path], tag: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{base}#/{TOKEN_RUN}/episodes")
    count = page.locator("#episodes-count")
    expect(count).to_have_text(all_of(len(trajectories)))
    expect(page.locator("tr.episode-row")).to_have_count(len(trajectories))
    expect(page.locator("#stat-episodes")).to_have_text(str(len(trajectories)))
    screenshot(page, shots, f"{tag}-episodes")

    wins = [i for i, t in enumerate(trajectories) if t.outcome is Outcome.SUCCESS]
    page.select_option("#filter-outcome", "success")
    expect(count).to_have_text(all_of(len(wins)))
    rows = page.locator("tr.episode-row")
    expect(rows).to_have_count(len(wins))
    assert [int(i) for i in rows.evaluate_all("rs => rs.map(r => r.dataset.index)")] == wins
    assert set(rows.locator(".badge").all_inner_texts()) == {"success"}

    page.click("#filter-clear")
    expect(count).to_have_text(all_of(len(trajectories)))
    task_four = [i for i, t in enumerate(trajectories) if t.task.task_id == 4]
    page.fill("#filter-task", "4")
    page.press("#filter-task", "Enter")
    expect(count).to_have_text(all_of(len(task_four)))
    assert set(rows.locator("td.task").all_inner_texts()) == {"4"}
    page.fill("#filter-min_reward", "0.5")
    page.click("#filter-apply")
    matching = [i for i in task_four if trajectories[i].reward >= 0.5]
    expect(count).to_have_text(all_of(len(matching)))
    assert "task=4" in page.url and "min_reward=0.5" in page.url  # a filtered view is a link to share
    screenshot(page, shots, f"{tag}-episodes-filtered")


def check_replay_and_tokens(page: Any, base: str, trajectories: list[Trajectory], shots: list[Path], tag: str) -> None:
    from playwright.sync_api import expect

    number = max(
        range(len(trajectories)), key=lambda i: (trajectories[i].tokens is not None, len(trajectories[i].turns))
    )
    episode = trajectories[number]
    assert episode.tokens is not None and len(episode.turns) > 1
    page.goto(f"{base}#/{TOKEN_RUN}/episodes?env=guess")
    page.click(f"tr.episode-row[data-index='{number}']")
    expect(page.locator(".episode-head h2")).to_contain_text(f"Episode {number}")
    expect(page.locator(".episode-head .badge")).to_have_text(episode.outcome.value)
    expect(page.locator("#replay .start .observation")).to_have_text(episode.first_observation)
    turns = page.locator("#replay li.turn")
    expect(turns).to_have_count(len(episode.turns))
    for i, turn in enumerate(episode.turns):
        card = turns.nth(i)
        expect(card.locator(".action")).to_have_text(str(turn.action))
        expect(card.locator(".observation")).to_have_text(turn.observation)
        expect(card.locator(".reward")).to_have_text(f"reward {turn.reward:g}")
    expect(turns.last.locator(".flag")).to_have_text("terminated")

    trace = episode.tokens
    response = page.locator("#response-tokens .tok")
    expect(response).to_have_count(len(trace.response_ids))
    trained = page.locator("#response-tokens .tok.trained")
    expect(trained).to_have_count(sum(trace.response_mask))
    expect(page.locator("#response-tokens .tok.env")).to_have_count(len(trace.response_mask) - sum(trace.response_mask))
    # The trained tokens read as what the model said: each turn's action and the end-of-turn token.
    trained_text = "".join(trained.all_inner_texts())
    for turn in episode.turns:
        assert str(turn.action) in trained_text
    first = next(i for i, m in enumerate(trace.response_mask) if m)
    title = response.nth(first).get_attribute("title")
    assert f"id {trace.response_ids[first]}" in title and "trained (mask 1)" in title
    assert f"logprob {trace.logprobs[first]:.4f}" in title
    response.nth(first).hover()
    expect(page.locator("#token-inspector")).to_have_text(title)
    expect(page.locator("#token-stats")).to_contain_text(f"{sum(trace.response_mask)} trained (mask 1)")
    screenshot(page, shots, f"{tag}-episode-replay")


def check_tasks_and_curves(page: Any, base: str, trajectories: list[Trajectory], shots: list[Path], tag: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{base}#/{TOKEN_RUN}/episodes")
    expect(page.locator("#episodes-count")).to_have_text(all_of(len(trajectories)))
    page.click("#tabs a[data-view='tasks']")
    rows = page.locator("#task-table tbody tr")
    expect(rows).to_have_count(len({(t.task.env, t.task.task_id) for t in trajectories}))
    trail_one = [t for t in trajectories if t.task.env == "trail" and t.task.task_id == 1]
    row = page.locator("tr.task-row[data-task='1']")
    cells = row.locator("td").all_inner_texts()
    wins = sum(t.outcome is Outcome.SUCCESS for t in trail_one)
    assert cells[:4] == ["trail", "1", str(len(trail_one)), str(wins)]
    assert cells[4] == f"{100 * wins / len(trail_one):.1f}%"
    expect(page.locator("#task-table thead")).to_contain_text("pass@3")
    screenshot(page, shots, f"{tag}-tasks")
    row.locator("td.task a").click()  # a task's row leads to its episodes
    expect(page.locator("#episodes-count")).to_have_text(all_of(len(trail_one)))

    page.click("#tabs a[data-view='curves']")
    success = page.locator("figure.chart[data-series='success']")
    expect(success.locator("circle.point")).to_have_count(STEPS)
    points = success.locator("polyline.curve").get_attribute("points")
    heights = [float(p.split(",")[1]) for p in points.split()]
    assert len(heights) == STEPS and heights == sorted(heights, reverse=True)  # success rises: y falls on screen
    expect(success.locator("circle.point").last.locator("title")).to_have_text(f"step {STEPS}: success 1")
    expect(page.locator("figure.chart[data-series='loss'] circle.point")).to_have_count(STEPS)
    screenshot(page, shots, f"{tag}-curves")


def test_the_viewer_lists_filters_and_switches_runs(
    page: Any, view_url: str, runs_root: Path, screenshot_dirs: list[Path]
) -> None:
    from playwright.sync_api import expect

    check_list_and_filters(page, view_url, token_run(runs_root), screenshot_dirs, "view")
    page.goto(view_url)
    expect(page.locator("#run-picker")).to_be_visible()
    expect(page.locator(".run-header h2")).to_contain_text("eval-guess")  # the newest run opens first
    page.select_option("#run-select", TOKEN_RUN)
    expect(page.locator(".run-header h2")).to_contain_text(TOKEN_RUN)


def test_the_viewer_replays_an_episode_with_its_tokens(
    page: Any, view_url: str, runs_root: Path, screenshot_dirs: list[Path]
) -> None:
    check_replay_and_tokens(page, view_url, token_run(runs_root), screenshot_dirs, "view")


def test_the_viewer_shows_the_task_table_and_learning_curves(
    page: Any, view_url: str, runs_root: Path, screenshot_dirs: list[Path]
) -> None:
    check_tasks_and_curves(page, view_url, token_run(runs_root), screenshot_dirs, "view")


def test_the_report_from_disk_shows_the_same(
    page: Any, report_url: str, runs_root: Path, screenshot_dirs: list[Path]
) -> None:
    trajectories = token_run(runs_root)
    check_list_and_filters(page, report_url, trajectories, screenshot_dirs, "report")
    check_replay_and_tokens(page, report_url, trajectories, screenshot_dirs, "report")
    check_tasks_and_curves(page, report_url, trajectories, screenshot_dirs, "report")
    assert re.search("report generated", page.locator("#status").inner_text())


def test_a_report_says_which_episodes_it_does_not_hold(page: Any, runs_root: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    out = tmp_path / "small.html"
    write_report(runs_root / TOKEN_RUN, out, episodes=1)
    page.goto(f"{out.as_uri()}#/{TOKEN_RUN}/episodes")
    expect(page.locator("#embed-note")).to_contain_text("This report holds 1 of 15 episodes in full")
    expect(page.locator("tr.episode-row.not-embedded")).to_have_count(14)
    page.goto(f"{out.as_uri()}#/{TOKEN_RUN}/episode/14")
    expect(page.locator(".note")).to_contain_text("Episode 14 is not embedded in this report: it embeds 1 of 15")
    expect(page.locator(".note")).to_contain_text("episodes=15")


def test_text_from_a_run_is_shown_as_text_never_run(page: Any, tmp_path: Path, screenshot_dirs: list[Path]) -> None:
    from playwright.sync_api import expect

    run = hostile_run(tmp_path / "runs")
    write_report(run, tmp_path / "report.html")
    with running_view(run, tmp_path / "ready.json") as url:
        for base in (url, (tmp_path / "report.html").as_uri()):
            page.goto(f"{base}#/hostile/episode/0")
            expect(page.locator("#replay .start .observation")).to_have_text(HOSTILE)
            expect(page.locator("#replay li.turn .action")).to_have_text(HOSTILE)
            assert page.evaluate("window.pwned") is None and page.locator("#replay img").count() == 0
    screenshot(page, screenshot_dirs, "hostile-text")


def test_with_a_token_the_printed_url_logs_the_browser_in_and_the_page_works(
    page: Any, runs_root: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    token = "browser-token-0123456789"
    with running_view(runs_root, tmp_path / "ready.json", f"token={token}") as url:
        page.goto(f"{url}?token={token}")  # what `agenthub view` printed
        assert page.url == url  # redirected: the token is no longer in the address bar or the history
        page.goto(f"{url}#/{TOKEN_RUN}/episodes")
        expect(page.locator("#episodes-count")).to_have_text(all_of(len(token_run(runs_root))))
