"""The conformance checker: protocol-v1 behaviour every environment service must show.

Checks run in a fixed order, like gymnasium's ``check_env``, through a real
HTTP server (a thread on loopback unless ``url`` is given). Each check passes,
fails with a reason, or is skipped with a reason.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from agenthub.errors import AgenthubError, EnvServiceError
from agenthub.plugins import get_plugin_host
from agenthub.protocols import Agent
from agenthub.service.client import EnvClient, RemoteSession
from agenthub.service.launcher import ThreadedServer
from agenthub.service.settings import ServiceSettings
from agenthub.specs import EnvSpec
from agenthub.types import EnvInfo, Observation, Task, TaskId

PROBE_TEXT_ACTIONS = ("look", "inventory", "help")
INVALID_ACTION = "@@ this is not a valid action @@"


class CheckFailed(AssertionError):
    """A check found behaviour that breaks protocol v1."""


class CheckSkipped(Exception):
    """A check could not run on this env (the reason says what would let it)."""


@dataclass
class CheckResult:
    name: str
    status: str  # "passed", "failed" or "skipped"
    detail: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status != "failed"


@dataclass
class ConformanceReport:
    env: str
    url: str
    results: list[CheckResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def result(self, name: str) -> CheckResult:
        return next(r for r in self.results if r.name == name)

    def summary(self) -> str:
        lines = [f"conformance of env {self.env!r} at {self.url}:"]
        for r in self.results:
            mark = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[r.status]
            lines.append(f"  {mark}  {r.name:<22} {r.detail}")
        counts = {status: sum(r.status == status for r in self.results) for status in ("passed", "skipped", "failed")}
        lines.append(", ".join(f"{n} {status}" for status, n in counts.items()))  # a skip is no pass
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "url": self.url,
            "passed": self.passed,
            "results": [r.__dict__ for r in self.results],
        }


@dataclass
class CheckContext:
    client: EnvClient
    raw: httpx.AsyncClient
    info: EnvInfo
    oracle: Agent | None
    sessions: int
    probe_turns: int

    @property
    def seats(self) -> range:
        return range(self.info.players)

    def split(self) -> str:
        return self.info.splits[0]

    async def task_ids(self, n: int) -> list[TaskId]:
        listing = await self.client.tasks(self.split())
        if listing.ids is not None:
            return list(listing.ids[:n])
        assert listing.start is not None and listing.stop is not None
        return list(range(listing.start, min(listing.stop, listing.start + n)))


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def probe_action(observation: Observation, turn: int) -> str:
    """A deterministic action: cycle through the listed actions, else generic verbs."""
    actions = observation.available_actions
    if actions:
        return actions[(turn * 7) % len(actions)]
    return PROBE_TEXT_ACTIONS[turn % len(PROBE_TEXT_ACTIONS)]


async def transcript(session: RemoteSession, turns: int) -> list[tuple[str, str, float, bool, bool]]:
    """Step a session with probe actions; the (action, observation, reward, terminated, truncated) list."""
    observation = Observation(text=session.observation, info=session.info)
    rows = []
    for turn in range(turns):
        action = probe_action(observation, turn)
        result = await session.step(action)
        rows.append((action, result.observation, result.reward, result.terminated, result.truncated))
        if result.done:
            break
        observation = Observation(text=result.observation, info=result.info)
    return rows


# ---- the checks, in order ----------------------------------------------------------


async def check_info(ctx: CheckContext) -> str:
    _expect(ctx.info.protocol == 1, f"protocol is {ctx.info.protocol}, expected 1")
    _expect(bool(ctx.info.splits), "info lists no splits")
    return f"{ctx.info.name} {ctx.info.version}, splits {ctx.info.splits}"


async def check_task_listing(ctx: CheckContext) -> str:
    counts = {}
    for split in ctx.info.splits:
        listing = await ctx.client.tasks(split)
        _expect(listing.count > 0, f"split {split!r} has no tasks")
        if listing.ids is not None:
            _expect(len(listing.ids) == listing.count, f"split {split!r}: count does not match the ids")
        counts[split] = listing.count
    response = await ctx.raw.get("/v1/tasks", params={"split": "no-such-split"})
    _expect(response.status_code == 422, f"an unknown split answered {response.status_code}, expected 422")
    return ", ".join(f"{k}: {v}" for k, v in counts.items())


async def check_payload_schemas(ctx: CheckContext) -> str:
    async with await ctx.client.create_session(split=ctx.split(), seed=0) as session:
        _expect(isinstance(session.observation, str) and session.observation != "", "the first observation is empty")
        result = await session.step(probe_action(Observation(text=session.observation, info=session.info), 0))
        _expect(math.isfinite(result.reward), f"reward {result.reward} is not finite")
        state = await session.state()
        _expect(state.turns == 1, f"GET session says {state.turns} turns after one step")
        actions = session.info.get("available_actions")
        if actions is not None:
            _expect(
                isinstance(actions, list) and all(isinstance(a, str) for a in actions),
                "info['available_actions'] must be a list of str",
            )
    return "create, step and state payloads validate"


async def check_seeded_determinism(ctx: CheckContext) -> str:
    runs = []
    for _ in range(2):
        async with await ctx.client.create_session(split=ctx.split(), seed=123) as session:
            runs.append((session.task_id, session.observation, await transcript(session, ctx.probe_turns)))
    _expect(runs[0] == runs[1], "two sessions created with seed=123 gave different observations")
    async with await ctx.client.create_session(split=ctx.split(), seed=456) as other:
        differs = (other.task_id, other.observation) != runs[0][:2]
    return "seed 123 twice is identical" + ("; seed 456 differs" if differs else "; seed 456 gives the same start")


async def check_reset_determinism(ctx: CheckContext) -> str:
    task_id = (await ctx.task_ids(1))[0]
    async with await ctx.client.create_session(task_id, seed=7) as session:
        first = (session.observation, await transcript(session, ctx.probe_turns))
        for attempt in range(3):
            again = await session.reset(task_id, seed=7)
            session.observation, session.info = again.observation, again.info
            repeat = (again.observation, await transcript(session, ctx.probe_turns))
            _expect(repeat == first, f"reset #{attempt + 1} of task {task_id!r} drifted from the first episode")
    return "resets of one session replay identically"


async def check_session_isolation(ctx: CheckContext) -> str:
    task_ids = await ctx.task_ids(ctx.sessions)
    one_by_one = []
    for task_id in task_ids:
        async with await ctx.client.create_session(task_id, seed=1) as session:
            one_by_one.append((session.observation, await transcript(session, ctx.probe_turns)))

    async def run(task_id: TaskId) -> tuple[str, list[tuple[str, str, float, bool, bool]]]:
        async with await ctx.client.create_session(task_id, seed=1) as session:
            return session.observation, await transcript(session, ctx.probe_turns)

    together = await asyncio.gather(*(run(t) for t in task_ids))
    for task_id, alone, parallel in zip(task_ids, one_by_one, together, strict=True):
        _expect(alone == parallel, f"task {task_id!r} played differently alongside other sessions")
    return f"{len(task_ids)} sessions in parallel match one by one"


async def check_idempotent_step(ctx: CheckContext) -> str:
    async with await ctx.client.create_session(split=ctx.split(), seed=3) as session:
        action = probe_action(Observation(text=session.observation, info=session.info), 0)
        request_id = uuid.uuid4().hex
        first = await session.step(action, request_id=request_id)
        second = await session.step(action, request_id=request_id)
        _expect(first == second, "a retried step with the same request_id gave a different answer")
        turns = (await session.state()).turns
        _expect(turns == 1, f"a retried step was applied twice ({turns} turns recorded)")
    return "a retried request_id is answered once"


async def check_reset_after_done(ctx: CheckContext) -> str:
    task_id = (await ctx.task_ids(1))[0]
    limit = max(3 * ctx.info.default_max_turns, 50)
    async with await ctx.client.create_session(task_id, seed=0) as session:
        observation = Observation(text=session.observation, info=session.info)
        # One oracle episode per seat: on a multi-player env the oracle plays every seat (self-play).
        episodes = (
            {s: ctx.oracle.start_episode(Task(env=ctx.info.name, task_id=task_id, seed=0), ctx.info) for s in ctx.seats}
            if ctx.oracle
            else {}
        )
        done = False
        for turn in range(limit):
            episode = episodes.get(session.seat or 0)
            action = (await episode.act(observation)).action if episode else probe_action(observation, turn)
            result = await session.step(action)
            if result.done:
                done = True
                break
            observation = Observation(text=result.observation, info=result.info)
        if not done:
            raise CheckSkipped(f"no episode ended within {limit} steps; pass agent=<oracle> to reach the end")
        try:
            await session.step(probe_action(observation, 0))
        except EnvServiceError as exc:
            _expect(exc.status == 409, f"a step after the end answered {exc.status}, expected 409")
        else:
            raise CheckFailed("a step after the episode ended was accepted; it must answer 409")
        again = await session.reset(task_id, seed=0)
        _expect(again.observation == session.observation, "reset after the end did not restart the same task")
        await session.step(probe_action(Observation(text=again.observation, info=again.info), 0))
    return f"episode ended after {turn + 1} steps; 409 after the end; reset works"


async def check_close_twice(ctx: CheckContext) -> str:
    session = await ctx.client.create_session(split=ctx.split())
    first = await ctx.raw.delete(f"/v1/sessions/{session.id}")
    _expect(first.status_code == 204, f"DELETE answered {first.status_code}, expected 204")
    second = await ctx.raw.delete(f"/v1/sessions/{session.id}")
    _expect(second.status_code in (204, 404), f"a second DELETE answered {second.status_code}, expected 204 or 404")
    after = await ctx.raw.post(f"/v1/sessions/{session.id}/step", json={"action": "look"})
    _expect(after.status_code == 404, f"a step on a closed session answered {after.status_code}, expected 404")
    return f"204, then {second.status_code}; closed sessions answer 404"


async def check_unknown_session(ctx: CheckContext) -> str:
    sid = "no-such-session-" + uuid.uuid4().hex
    for method, path, body in (
        ("POST", f"/v1/sessions/{sid}/step", {"action": "look"}),
        ("POST", f"/v1/sessions/{sid}/reset", {}),
        ("GET", f"/v1/sessions/{sid}", None),
    ):
        response = await ctx.raw.request(method, path, json=body)
        _expect(response.status_code == 404, f"{method} {path} answered {response.status_code}, expected 404")
        _expect_error_body(response)
    return "404 with a JSON error body"


async def check_invalid_action(ctx: CheckContext) -> str:
    async with await ctx.client.create_session(split=ctx.split(), seed=5) as session:
        result = await session.step(INVALID_ACTION)
        _expect(result.observation.strip() != "", "an invalid action got an empty observation")
        if not result.done:
            await session.step(probe_action(Observation(text=session.observation, info=session.info), 0))
    return f"answered in the env's words: {result.observation[:60]!r}"


async def check_bad_requests(ctx: CheckContext) -> str:
    async with await ctx.client.create_session(split=ctx.split()) as session:
        path = f"/v1/sessions/{session.id}/step"
        cases = [
            (
                "malformed JSON",
                await ctx.raw.post(path, content=b"{not json", headers={"content-type": "application/json"}),
                400,
            ),
            ("wrong type", await ctx.raw.post(path, json={"action": 42}), 422),
            ("missing action", await ctx.raw.post(path, json={}), 422),
            ("unknown field", await ctx.raw.post("/v1/sessions", json={"task": 1}), 422),
        ]
        for what, response, expected in cases:
            _expect(response.status_code == expected, f"{what} answered {response.status_code}, expected {expected}")
            _expect_error_body(response)
        state = await session.state()
        _expect(state.turns == 0, "a refused request changed the session")
    return "400/422 with JSON error bodies; the session is untouched"


def _expect_error_body(response: httpx.Response) -> None:
    try:
        error = response.json()["error"]
        ok = isinstance(error["code"], str) and isinstance(error["message"], str) and error["message"] != ""
    except Exception:
        ok = False
    _expect(
        ok,
        f"the {response.status_code} answer lacks an {{error: {{code, message}}}} JSON body: {response.text[:200]!r}",
    )


async def check_seats(ctx: CheckContext) -> str:
    """A single-player env refuses a seat (422); a multi-player env names the seat on turn and keeps turn order."""
    async with await ctx.client.create_session(split=ctx.split(), seed=11) as session:
        path = f"/v1/sessions/{session.id}/step"
        action = probe_action(Observation(text=session.observation, info=session.info), 0)
        if not ctx.info.multi_player:
            _expect(session.seat is None, f"a single-player env's create answer names seat {session.seat}")
            response = await ctx.raw.post(path, json={"action": action, "seat": 0})
            _expect(response.status_code == 422, f"a step with a seat answered {response.status_code}, expected 422")
            _expect_error_body(response)
            return "single-player: no seat in answers; a step with a seat is refused with 422"
        on_turn = session.seat
        _expect(
            on_turn is not None and 0 <= on_turn < ctx.info.players,
            f"the create answer of a {ctx.info.players}-seat env names seat {on_turn!r}, expected 0 to "
            f"{ctx.info.players - 1}",
        )
        assert on_turn is not None
        if ctx.info.seats is not None:
            _expect(len(ctx.info.seats) == ctx.info.players, "info names a different number of seats than players")
        missing = await ctx.raw.post(path, json={"action": action})
        _expect(missing.status_code == 422, f"a step without a seat answered {missing.status_code}, expected 422")
        _expect_error_body(missing)
        _expect(
            str(on_turn) in missing.json()["error"]["message"],
            "the 422 for a missing seat does not name the seat on turn",
        )
        wrong = (on_turn + 1) % ctx.info.players
        refused = await ctx.raw.post(path, json={"action": action, "seat": wrong})
        _expect(
            refused.status_code == 409,
            f"a step by seat {wrong} out of turn answered {refused.status_code}, expected 409",
        )
        _expect_error_body(refused)
        code = refused.json()["error"]["code"]
        _expect(code == "not_your_turn", f"a step out of turn answered code {code!r}, expected 'not_your_turn'")
        unknown = await ctx.raw.post(path, json={"action": action, "seat": ctx.info.players})
        _expect(unknown.status_code == 422, f"a step by a seat that does not exist answered {unknown.status_code}")
        _expect((await session.state()).turns == 0, "a refused step changed the session")
        result = await session.step(action, seat=on_turn)
        _expect(
            result.seat is not None and 0 <= result.seat < ctx.info.players,
            f"a step answer names seat {result.seat!r}",
        )
    return f"{ctx.info.players} seats: 422 without a seat, 409 not_your_turn out of turn, the seat on turn steps"


async def check_seat_rewards(ctx: CheckContext) -> str:
    """Every step answers every seat's reward; the step that ends an episode shows every seat its final view."""
    if not ctx.info.multi_player:
        raise CheckSkipped("a single-player env has no seats")
    task_id = (await ctx.task_ids(1))[0]
    limit = max(3 * ctx.info.default_max_turns, 50)
    names = [str(s) for s in ctx.seats]
    totals = dict.fromkeys(names, 0.0)
    async with await ctx.client.create_session(task_id, seed=0) as session:
        observation = Observation(text=session.observation, info=session.info)
        episodes = (
            {s: ctx.oracle.start_episode(Task(env=ctx.info.name, task_id=task_id, seed=0), ctx.info) for s in ctx.seats}
            if ctx.oracle
            else {}
        )
        for turn in range(limit):
            acting = session.seat
            assert acting is not None
            episode = episodes.get(acting)
            action = (await episode.act(observation)).action if episode else probe_action(observation, turn)
            result = await session.step(action)
            _expect(result.rewards is not None, f"step {turn + 1} of a multi-player env has no 'rewards'")
            assert result.rewards is not None
            _expect(sorted(result.rewards) == sorted(names), f"step {turn + 1} rewards seats {sorted(result.rewards)}")
            _expect(
                result.reward == result.rewards[str(acting)],
                f"step {turn + 1}: reward {result.reward} is not the acting seat {acting}'s "
                f"{result.rewards[str(acting)]}",
            )
            for name in names:
                totals[name] += result.rewards[name]
            if result.done:
                _expect(
                    result.observations is not None and sorted(result.observations) == sorted(names),
                    "the step that ended the episode does not carry every seat's final observation",
                )
                return f"ended after {turn + 1} steps; returns by seat {totals}; every seat saw the end"
            _expect(result.observations is None, f"step {turn + 1} carries final observations but did not end")
            observation = Observation(text=result.observation, info=result.info)
    raise CheckSkipped(f"no episode ended within {limit} steps; pass agent=<oracle> to reach the end")


CHECKS: list[tuple[str, Callable[[CheckContext], Awaitable[str]]]] = [
    ("info", check_info),
    ("task_listing", check_task_listing),
    ("payload_schemas", check_payload_schemas),
    ("seeded_determinism", check_seeded_determinism),
    ("reset_determinism", check_reset_determinism),
    ("session_isolation", check_session_isolation),
    ("idempotent_step", check_idempotent_step),
    ("reset_after_done", check_reset_after_done),
    ("close_twice", check_close_twice),
    ("unknown_session", check_unknown_session),
    ("invalid_action", check_invalid_action),
    ("bad_requests", check_bad_requests),
    ("seats", check_seats),
    ("seat_rewards", check_seat_rewards),
]
CHECK_NAMES = [name for name, _ in CHECKS]


async def run_checks(
    url: str, *, token: str | None = None, oracle: Agent | None = None, sessions: int = 8, probe_turns: int = 5
) -> ConformanceReport:
    """Run every check against the server at ``url``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        EnvClient(url, token=token, timeout=120) as client,
        httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as raw,
    ):
        info = await client.info()
        report = ConformanceReport(env=info.name, url=url)
        ctx = CheckContext(client, raw, info, oracle, sessions, probe_turns)
        for name, check in CHECKS:
            started = time.perf_counter()
            try:
                detail = await check(ctx)
                status = "passed"
            except CheckSkipped as exc:
                status, detail = "skipped", str(exc)
            except (CheckFailed, AgenthubError) as exc:
                status, detail = "failed", str(exc)
            report.results.append(CheckResult(name, status, detail, time.perf_counter() - started))
    return report


def check_env(
    env: str | EnvSpec | None = None,
    *,
    url: str | None = None,
    token: str | None = None,
    agent: str | Agent | None = None,
    sessions: int = 8,
    settings: ServiceSettings | None = None,
) -> ConformanceReport:
    """Check an installed env (served on loopback for the run) or a server already at ``url``.

    ``agent`` (default: the env's registered oracle) drives an episode to its end.

    >>> report = check_env("guess")  # doctest: +SKIP
    >>> assert report.passed, report.summary()  # doctest: +SKIP
    """
    if env is None and url is None:
        raise AgenthubError("check_env needs an env name, an EnvSpec, or url=")
    host = get_plugin_host()
    spec = host.env(env) if isinstance(env, str) else env
    if agent is None and spec is not None and spec.oracle is not None:
        agent = spec.oracle
    oracle = host.agent(agent).make() if isinstance(agent, str) else agent
    if url is not None:
        return asyncio.run(run_checks(url, token=token, oracle=oracle, sessions=sessions))
    assert spec is not None
    settings = settings or ServiceSettings()
    with ThreadedServer(spec, settings) as server:
        return asyncio.run(run_checks(server.url, token=settings.token, oracle=oracle, sessions=sessions))
