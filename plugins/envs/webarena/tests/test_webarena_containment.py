"""Escape attempts through the real env (real Chromium, real shop, real sites on loopback); each must fail.

The pages are a small site of ours (allowed: the task's ``shopping`` site) whose own scripts try to leave
it (iframes, popups, fetch, WebSockets, workers, redirects), and a *forbidden* server on another loopback
port that counts every TCP connection made to it: a request that reached it, of any kind, is an escape.
The session-deleting attack runs on the built-in shop. One browser serves the whole module.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import socketserver
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agenthub_env_webarena.actions import fenced
from agenthub_env_webarena.containment import SitePolicy, canonical_host, site_of
from agenthub_env_webarena.env import TASKS_ENV_VAR


class Forbidden(socketserver.ThreadingTCPServer):
    """A server the pages must never reach: counts connections (HTTP, WebSocket, anything) and answers 'ok'."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.connections = 0
        super().__init__(("127.0.0.1", 0), _CountingHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _CountingHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        assert isinstance(self.server, Forbidden)
        self.server.connections += 1
        self.request.settimeout(2)
        try:
            self.request.recv(65536)
            self.request.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 21\r\n\r\n<h1>LEAKED PAGE</h1>\n"
            )
        except OSError:
            return


def pages(forbidden: str) -> dict[str, str]:
    """The allowed site: every page's own script tries to reach ``forbidden`` in its own way."""
    ws = forbidden.replace("http://", "ws://")
    return {
        "index.html": f"""<!doctype html><title>Contained</title><h1>Contained</h1>
<a href="/redirect?to={forbidden}/redirected">Away by redirect</a>
<a href="{forbidden}/link">Away by link</a>
<a href="file:///etc/passwd">Local file</a> <a href="chrome://version">Browser page</a>
<a href="data:text/html,<h1>DATA PAGE</h1>">Data page</a>
<button onclick="window.open('{forbidden}/popup')">Open popup</button>""",
        "frames.html": f"""<!doctype html><title>Frames</title><h1>Frames</h1>
<iframe src="{forbidden}/iframe"></iframe><iframe src="/redirect?to={forbidden}/iframe-redirect"></iframe>
<img src="{forbidden}/img.png" alt="pixel"><link rel="stylesheet" href="{forbidden}/style.css">
<script src="{forbidden}/script.js"></script>""",
        "scripts.html": f"""<!doctype html><title>Scripts</title><h1>Scripts</h1><p id="out">running</p>
<script>
const results = [];
const note = (what) => {{ results.push(what); document.getElementById('out').textContent = results.join(' '); }};
fetch('{forbidden}/fetch').then(() => note('fetch-reached')).catch(() => note('fetch-blocked'));
fetch('{forbidden}/no-cors', {{mode: 'no-cors'}}).then(() => note('nocors-reached'))
  .catch(() => note('nocors-blocked'));
const xhr = new XMLHttpRequest(); xhr.open('GET', '{forbidden}/xhr'); xhr.onerror = () => note('xhr-blocked');
xhr.onload = () => note('xhr-reached'); xhr.send();
navigator.sendBeacon('{forbidden}/beacon', 'x');
let wsSeen = false;
const wsNote = (what) => {{ if (!wsSeen) {{ wsSeen = true; note(what); }} }};
const ws = new WebSocket('{ws}/ws'); ws.onopen = () => wsNote('ws-reached');
ws.onerror = ws.onclose = () => wsNote('ws-blocked');
const worker = new Worker(URL.createObjectURL(new Blob(
  ["fetch('{forbidden}/worker').then(() => postMessage('worker-reached')).catch(() => postMessage('worker-blocked'));"
   + "try {{ const s = new WebSocket('{ws}/worker-ws'); s.onerror = () => postMessage('wws-blocked'); }}"
   + " catch (e) {{}}"],
  {{type: 'text/javascript'}})));
worker.onmessage = (e) => note(e.data);
// Registration "succeeds" with no registration when blocked (Playwright's service_workers="block").
navigator.serviceWorker.register('/sw.js').then((r) => note(r ? 'sw-registered' : 'sw-blocked'))
  .catch(() => note('sw-blocked'));
</script>""",
        "sw.js": f"self.addEventListener('fetch', (e) => e.respondWith(fetch('{forbidden}/sw')));",
    }


class _Site(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        # Test-only open redirect (the shop has none): an allowed page that sends the browser elsewhere.
        if self.path.startswith("/redirect?"):
            target = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)["to"][0]
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()


TASK = {
    "task_id": 1,
    "sites": ["shopping"],
    "start_url": "__SHOPPING__/index.html",
    "intent": "Stay on the site.",
    "require_login": False,
    "storage_state": None,
    "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "never"}},
}


@pytest.fixture(scope="module")
def forbidden() -> Iterator[Forbidden]:
    server = Forbidden()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, forbidden: Forbidden) -> Iterator[str]:
    root = tmp_path_factory.mktemp("contained-site")
    for name, text in pages(forbidden.url).items():
        (root / name).write_text(text, encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: _Site(*a, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def env(chromium: None, site: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from agenthub_env_webarena.env import WebArenaEnv

    tasks = tmp_path_factory.mktemp("contained-tasks")
    (tasks / "1.json").write_text(json.dumps(TASK), encoding="utf-8")
    instance = WebArenaEnv(tasks=str(tasks), sites={"shopping": site}, real_urls=False)
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def shop_env(chromium: None) -> Iterator[Any]:
    """The built-in task set on the built-in shop: a site of its own per session, behind the session secret."""
    from agenthub_env_webarena.env import WebArenaEnv

    saved = {name: os.environ.pop(name, None) for name in (TASKS_ENV_VAR, "SHOPPING")}
    try:
        instance = WebArenaEnv(real_urls=False)
    finally:
        os.environ.update({k: v for k, v in saved.items() if v is not None})
    yield instance
    instance.close()


def step(env: Any, action: str) -> tuple[str, dict[str, Any]]:
    observation, reward, terminated, truncated, info = env.step(fenced(action))
    assert (reward, terminated, truncated) == (0.0, False, False), observation
    return observation, info


def element(observation: str, role: str, name: str) -> int:
    match = re.search(rf"\[(\d+)\] {re.escape(role)} {re.escape(repr(name))}", observation)
    assert match, f"no {role} {name!r} in:\n{observation}"
    return int(match.group(1))


def quiet(forbidden: Forbidden, before: int, settle_s: float = 0.3) -> None:
    time.sleep(settle_s)  # a late request (a beacon, a retried socket) would land meanwhile
    assert forbidden.connections == before, f"{forbidden.connections - before} connections reached the forbidden server"


# -- the policy on its own: origins compared after the URL standard's host parsing ---------------------------


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
        ("LOCALHOST", "localhost"),
        ("[::1]", "::1"),
        ("[0:0:0:0:0:0:0:1]", "::1"),
        ("127.0.0.256", None),
        ("1.2.3.4.5", None),
    ],
)
def test_hosts_are_parsed_as_the_url_standard_parses_them(host: str, canonical: str | None) -> None:
    assert canonical_host(host) == canonical


def test_the_policy_compares_normalized_origins_and_the_shop_s_session_path() -> None:
    policy = SitePolicy([site_of("http://127.0.0.1:7770"), site_of("http://127.0.0.1:9000/s/abc", whole_origin=False)])
    for allowed in (
        "http://127.0.0.1:7770/x",
        "http://127.1:7770/",
        "http://0x7f000001:7770/a?b",
        "ws://127.0.0.1:7770/w",
    ):
        assert policy.refusal(allowed) is None, allowed
    for url in (
        "http://localhost:7770/",
        "http://127.0.0.2:7770/",
        "http://[::1]:7770/",
        "https://127.0.0.1:7770/",
        "http://127.0.0.1:7771/",
        "http://127.0.0.1:9000/_sessions/abc",
        "http://127.0.0.1:9000/s/abcd/",
        "http://127.0.0.1:9000/s/abc/../other/",
        "http://127.0.0.1:9000/s/abc/%2e%2e/%2E%2E/_sessions",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "chrome://version",
        "data:text/html,x",
        "view-source:http://127.0.0.1:7770/",
        "blob:http://127.0.0.1:7770/1234",
    ):
        assert policy.refusal(url), url
    assert policy.refusal("http://127.0.0.1:9000/s/abc/cart") is None
    assert policy.refusal("about:blank") is None


# -- through the env: the agent's own actions --------------------------------------------------------------------


def test_file_urls_are_refused(env: Any, site: str) -> None:
    env.reset(task_id=1)  # one episode for all: a refused goto changes nothing
    for url in ("file:///etc/passwd", "file:///etc/", "FILE:///etc/hostname"):
        observation, info = step(env, f"goto [{url}]")
        assert f"goto [{url}] was refused: " in observation, observation
        assert f"only the task's sites ({site}) may be visited" in observation
        page = observation.split("\nURL: ")[0]  # the tree: PREVIOUS ACTION repeats the action's text
        assert info["invalid_action"] is True and "root:x:0:0" not in page and "passwd" not in page
        assert info["url"] == f"{site}/index.html" and "RootWebArea 'Contained'" in page


def test_browser_internal_and_script_urls_are_refused(env: Any, site: str) -> None:
    env.reset(task_id=1)
    for url in (
        "javascript:document.title='pwned'",
        "JavaScript:void(document.body.innerHTML='pwned')",
        "chrome://version",
        "chrome://crash",
        "devtools://devtools/bundled/inspector.html",
        f"view-source:{site}/index.html",
        "data:text/html,<title>pwned</title>",
        f"blob:{site}/0b6c7c1e-0000-4000-8000-000000000000",
        "about:version",
    ):
        observation, info = step(env, f"goto [{url}]")
        assert f"goto [{url}] was refused: " in observation, observation
        page = observation.split("\nURL: ")[0]
        assert "pwned" not in page and "Command Line" not in page, url
        assert "RootWebArea 'Contained'" in page and info["url"] == f"{site}/index.html", url


def test_other_loopback_ports_and_names_are_refused(env: Any, site: str, forbidden: Forbidden) -> None:
    env.reset(task_id=1)
    before = forbidden.connections
    port = forbidden.server_address[1]
    site_port = urllib.parse.urlsplit(site).port
    for url in (
        f"{forbidden.url}/",
        f"http://127.1:{port}/",
        f"http://0x7f000001:{port}/",
        f"http://2130706433:{port}/",
        f"http://localhost:{port}/",
        f"http://[::1]:{port}/",
        # The allowed site's own port under another name: not the allowed origin.
        f"http://localhost:{site_port}/index.html",
        f"http://127.0.0.2:{site_port}/index.html",
        f"https://127.0.0.1:{site_port}/index.html",
    ):
        observation, info = step(env, f"goto [{url}]")
        assert "was refused: it is not one of the task's sites" in observation, (url, observation)
        assert "LEAKED PAGE" not in observation and info["url"] == f"{site}/index.html"
    quiet(forbidden, before)
    # The same origin written another way is the same origin: allowed.
    observation, info = step(env, f"goto [http://127.1:{site_port}/frames.html]")
    assert "RootWebArea 'Frames'" in observation and "refused" not in observation


def test_a_redirect_from_the_site_to_elsewhere_is_refused(env: Any, site: str, forbidden: Forbidden) -> None:
    observation, _ = env.reset(task_id=1)
    before = forbidden.connections
    observation, info = step(env, f"click [{element(observation, 'link', 'Away by redirect')}]")
    assert f"{forbidden.url}/redirected was refused" in observation and info["invalid_action"] is True
    observation, info = step(env, f"goto [{site}/redirect?to={forbidden.url}/typed]")
    assert f"{forbidden.url}/typed was refused" in observation
    assert "LEAKED PAGE" not in observation
    quiet(forbidden, before)


def test_links_and_popups_off_the_site_are_refused(env: Any, site: str, forbidden: Forbidden) -> None:
    observation, _ = env.reset(task_id=1)
    before = forbidden.connections
    for name in ("Away by link", "Local file", "Browser page", "Data page"):
        observation, _ = step(env, f"click [{element(observation, 'link', name)}]")
        assert "RootWebArea 'Contained'" in observation, (name, observation)
        assert "LEAKED PAGE" not in observation and "DATA PAGE" not in observation and "root:x" not in observation
    observation, _ = step(env, f"click [{element(observation, 'button', 'Open popup')}]")
    assert "LEAKED PAGE" not in observation
    quiet(forbidden, before)


def test_iframes_and_subresources_off_the_site_are_refused(env: Any, site: str, forbidden: Forbidden) -> None:
    env.reset(task_id=1)
    before = forbidden.connections
    observation, _ = step(env, f"goto [{site}/frames.html]")
    assert "RootWebArea 'Frames'" in observation and "LEAKED PAGE" not in observation
    quiet(forbidden, before)


def test_page_scripts_cannot_fetch_open_sockets_or_use_workers_off_the_site(
    env: Any, site: str, forbidden: Forbidden
) -> None:
    env.reset(task_id=1)
    before = forbidden.connections
    observation, _ = step(env, f"goto [{site}/scripts.html]")
    deadline = time.monotonic() + 10
    wanted = ("fetch-blocked", "nocors-blocked", "xhr-blocked", "ws-blocked", "worker-blocked", "sw-blocked")
    moves = iter(["scroll [down]", "scroll [up]"] * 6)  # alternating: three equal actions stop an episode
    while not all(w in observation for w in wanted) and time.monotonic() < deadline:
        time.sleep(0.8)
        observation, _ = step(env, next(moves))
    assert all(w in observation for w in wanted), observation.split("\nURL:")[0][-400:]
    assert "reached" not in observation and "sw-registered" not in observation
    quiet(forbidden, before, settle_s=1.0)


def test_chromium_runs_sandboxed_and_not_as_root(env: Any) -> None:
    env.reset(task_id=1)
    if not env.host.sandboxed:  # CI (AGENTHUB_REQUIRE_PLUGIN_TESTS=1) must run it
        if os.environ.get("AGENTHUB_REQUIRE_PLUGIN_TESTS") == "1":
            pytest.fail(f"Chromium's sandbox could not start: {env.host.sandbox_note}")
        pytest.skip(f"Chromium's sandbox could not start on this machine: {env.host.sandbox_note}")
    renderers = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            cmdline = (status.parent / "cmdline").read_bytes().decode(errors="replace")
            text = status.read_text()
        except OSError:
            continue
        if "chromium" in cmdline and "--type=renderer" in cmdline:
            renderers.append((cmdline, text))
    assert renderers
    for cmdline, text in renderers:
        assert "--no-sandbox" not in cmdline
        uid = int(re.search(r"^Uid:\s+(\d+)", text, re.M).group(1))  # type: ignore[union-attr]
        assert uid != 0, "a renderer runs as root"
        assert re.search(r"^Seccomp:\s+2$", text, re.M), "a renderer runs without its seccomp filter"


# -- the built-in shop: its session API is the env's alone, and the agent's doing counts against it --------------


def _task(env: Any, eval_type: str, kind: str | None = None) -> int:
    return next(
        t.task_id
        for t in env.splits["test"]
        if t.eval_types == (eval_type,) and (kind is None or t.raw["oracle"]["kind"] == kind)
    )


def test_deleting_the_own_shop_session_fails_and_the_episode_still_counts(shop_env: Any) -> None:
    observation, info = shop_env.reset(task_id=_task(shop_env, "string_match"))
    site = info["url"].rstrip("/")
    root, token = site.rsplit("/s/", 1)
    delete = f"fetch('{root}/_sessions/{token}', {{method: 'DELETE'}})"
    observation, info = step(shop_env, f"goto [javascript:{delete}]")
    assert "was refused: javascript: URLs are not web pages" in observation
    # The same request from a script of the page itself: the browser refuses it before it is sent.
    answer = shop_env._run(
        shop_env._tab.page.evaluate(f"{delete}.then(r => 'status ' + r.status, e => 'blocked ' + e)")
    )
    assert answer.startswith("blocked"), answer
    # And were it sent, the shop would refuse it: the session API needs the secret only the env holds.
    assert httpx.delete(f"{root}/_sessions/{token}", trust_env=False).status_code == 403
    assert httpx.get(f"{site}/", trust_env=False).status_code == 200  # the session is still open
    # The shop's origin is not the site: its root, its API and other sessions' paths are refused.
    for url in (f"{root}/_health", f"{root}/s/{'0' * 32}/", f"{site}/../{'0' * 32}/cart", f"{root}/_sessions/{token}"):
        observation, _ = step(shop_env, f"goto [{url}]")
        assert "was refused: it is not one of the task's sites" in observation, (url, observation)
    _, reward, terminated, truncated, info = shop_env.step(fenced("stop [done]"))
    assert (reward, terminated, truncated, info["won"]) == (0.0, True, False, False), info
    assert "not_evaluated" not in info


def test_a_shop_session_gone_before_scoring_is_a_counted_failure_not_an_env_error(shop_env: Any) -> None:
    from agenthub_env_webarena.shop import close_session_site

    _, info = shop_env.reset(task_id=_task(shop_env, "program_html", "place_order"))
    close_session_site(shop_env._shop_site)  # as if the page had deleted it: the shop is up, the session gone
    _, reward, terminated, _, info = shop_env.step(fenced("stop [done]"))
    assert (reward, terminated, info["won"]) == (0.0, True, False)
    assert info["checks"][0]["type"] == "agent_error" and "shop session was gone" in info["checks"][0]["reason"]
    shop_env._shop_site = None  # closed above: the next reset opens a new one


def test_sandbox_settings_are_checked_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from agenthub_env_webarena.sandbox import SANDBOX_ENV_VAR, USER_ENV_VAR, SandboxError, browser_user, sandbox_mode

    monkeypatch.setenv(SANDBOX_ENV_VAR, "maybe")
    with pytest.raises(SandboxError, match=f"{SANDBOX_ENV_VAR}='maybe' is not a mode; use auto"):
        sandbox_mode()
    monkeypatch.setenv(SANDBOX_ENV_VAR, "Require")
    assert sandbox_mode() == "require"
    monkeypatch.setenv(USER_ENV_VAR, "no-such-user-here")
    with pytest.raises(SandboxError, match="does not exist"):
        browser_user()
    monkeypatch.setenv(USER_ENV_VAR, "root")
    with pytest.raises(SandboxError, match="is root; name an unprivileged user"):
        browser_user()
    monkeypatch.delenv(USER_ENV_VAR)
    assert browser_user().pw_uid != 0


def test_a_browser_without_its_sandbox_says_so_in_every_episode(
    chromium: None, site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agenthub_env_webarena.browser import BrowserHost
    from agenthub_env_webarena.env import WebArenaEnv
    from agenthub_env_webarena.sandbox import SANDBOX_ENV_VAR

    monkeypatch.setenv(SANDBOX_ENV_VAR, "off")
    (tmp_path / "1.json").write_text(json.dumps(TASK), encoding="utf-8")
    host = BrowserHost()  # a browser of its own: the module's keeps its sandbox
    env = WebArenaEnv(tasks=str(tmp_path), sites={"shopping": site}, host=host)
    try:
        _, info = env.reset(task_id=1)
        assert host.sandboxed is False
        assert any("WITHOUT Chromium's sandbox" in note and SANDBOX_ENV_VAR in note for note in info["notes"])
    finally:
        env.close()
        host.shutdown()
