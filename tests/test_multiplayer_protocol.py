"""Seats on the wire: the built-in two-player ``tictactoe`` served for real on loopback.

A single-player env is unchanged (no seat in its answers or its info; a seat sent to it is 422);
a multi-player env names the seat on turn, refuses a step without a seat (422) or out of turn
(409 ``not_your_turn``), answers every seat's reward, and shows every seat its final view.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from agenthub import SyncEnvClient, ThreadedServer, get_plugin_host
from agenthub.builtin.tictactoe import TicTacToeEnv, best_cell
from agenthub.service.settings import ServiceSettings
from agenthub.testing.conformance import check_env


@pytest.fixture(scope="module")
def tictactoe_url() -> Iterator[str]:
    with ThreadedServer(get_plugin_host().env("tictactoe"), ServiceSettings(remembered_replies=4)) as server:
        yield server.url


def test_tictactoe_passes_every_conformance_check_with_its_oracle_on_both_seats() -> None:
    report = check_env("tictactoe")
    assert report.passed, report.summary()
    for check in ("seats", "seat_rewards", "reset_after_done"):
        assert report.result(check).status == "passed", report.summary()


def test_info_declares_the_seats_and_a_single_player_env_is_unchanged_on_the_wire(tictactoe_url: str) -> None:
    info = httpx.get(f"{tictactoe_url}/v1/info").json()
    assert (info["players"], info["seats"]) == (2, ["X", "O"])
    with ThreadedServer(get_plugin_host().env("guess"), ServiceSettings()) as guess:
        assert "players" not in httpx.get(f"{guess.url}/v1/info").json()
        created = httpx.post(f"{guess.url}/v1/sessions", json={"task_id": 3}).json()
        assert "seat" not in created
        path = f"{guess.url}/v1/sessions/{created['session_id']}/step"
        refused = httpx.post(path, json={"action": "guess 8", "seat": 0})
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "seat_not_expected"
        stepped = httpx.post(path, json={"action": "guess 8"}).json()
        assert not {"seat", "rewards", "observations"} & set(stepped)


def test_turn_order_is_enforced_with_the_seat_on_turn_named(tictactoe_url: str) -> None:
    created = httpx.post(f"{tictactoe_url}/v1/sessions", json={"task_id": 0}).json()
    assert created["seat"] == 0 and "You play X" in created["observation"]
    path = f"{tictactoe_url}/v1/sessions/{created['session_id']}/step"
    missing = httpx.post(path, json={"action": "place 5"})
    assert missing.status_code == 422
    assert (
        missing.json()["error"]["code"] == "seat_required" and "seat 0 is on turn" in missing.json()["error"]["message"]
    )
    wrong = httpx.post(path, json={"action": "place 5", "seat": 1})
    assert wrong.status_code == 409
    assert wrong.json()["error"] == {
        "code": "not_your_turn",
        "message": "it is seat 0's turn, not seat 1's; step as seat 0, the seat named by the last answer",
    }
    unknown = httpx.post(path, json={"action": "place 5", "seat": 2})
    assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "unknown_seat"
    first = httpx.post(path, json={"action": "place 5", "seat": 0, "request_id": "r1"}).json()
    assert (first["seat"], first["rewards"], first["reward"]) == (1, {"0": 0.0, "1": 0.0}, 0.0)
    assert "You play O" in first["observation"] and first["info"]["board"] == "....X...."
    # A retried request id is answered from memory, even though seat 0 is no longer on turn.
    assert httpx.post(path, json={"action": "place 5", "seat": 0, "request_id": "r1"}).json() == first
    taken = httpx.post(path, json={"action": "place 5", "seat": 1}).json()
    assert taken["seat"] == 1 and taken["info"]["invalid_action"] is True and "taken" in taken["observation"]
    state = httpx.get(f"{tictactoe_url}/v1/sessions/{created['session_id']}").json()
    assert (state["seat"], state["turns"]) == (1, 2)


def test_the_last_step_answers_every_seat_its_reward_and_final_view(tictactoe_url: str) -> None:
    with SyncEnvClient(tictactoe_url) as client:
        session = client.create_session(task_id=1)
        seat = session.seat
        # X takes the top row while O plays elsewhere.
        for move in ("1", "4", "2", "5"):
            result = client.step(session.id, move, seat=seat)
            seat = result.seat
        final = client.step(session.id, "place 3", seat=0)
        assert (final.terminated, final.seat, final.reward) == (True, 0, 1.0)
        assert final.rewards == {"0": 1.0, "1": -1.0} and final.info["winner"] == 0
        assert final.observations is not None
        assert final.observations["0"].endswith("you won.") and final.observations["1"].endswith("you lost.")
        done = httpx.post(f"{tictactoe_url}/v1/sessions/{session.id}/step", json={"action": "place 9", "seat": 1})
        assert done.status_code == 409 and done.json()["error"]["code"] == "episode_done"
        again = client.reset(session.id, 1)
        assert again.seat == 0 and again.info["board"] == "." * 9


def test_a_draw_gives_both_seats_zero() -> None:
    env = TicTacToeEnv()
    _, _, seat = env.reset(task_id=0)
    step = None
    for cell in (1, 2, 3, 5, 4, 6, 8, 7, 9):  # X O X / X O O / O X X
        step = env.step(seat, f"place {cell}")
        seat = step.seat
    assert step is not None and step.terminated and step.rewards == {0: 0.0, 1: 0.0}
    assert all(text.endswith("a draw.") for text in step.observations.values())


def test_the_oracle_takes_a_win_and_blocks_a_loss() -> None:
    assert best_cell("XX.OO....", "X") == 2  # completes the top row
    assert best_cell("XX.O.....", "O") == 2  # blocks it
    assert best_cell("." * 9, "X") == 0  # every opening draws under perfect play; the lowest cell


def test_a_multi_player_env_that_breaks_its_contract_is_a_500_naming_it() -> None:
    class Forgetful(TicTacToeEnv):
        """Returns no observation for the seat it names on turn."""

        def step(self, seat: int, action: object) -> object:  # type: ignore[override]
            result = super().step(seat, action)  # type: ignore[arg-type]
            return result._replace(observations={})

    spec = get_plugin_host().env("tictactoe")
    broken = type(spec)(**{**spec.__dict__, "factory": Forgetful, "inline_calls": False})
    with ThreadedServer(broken, ServiceSettings()) as server:
        created = httpx.post(f"{server.url}/v1/sessions", json={}).json()
        answer = httpx.post(f"{server.url}/v1/sessions/{created['session_id']}/step", json={"action": "1", "seat": 0})
        assert answer.status_code == 500
        assert answer.json()["error"]["code"] == "env_contract" and "seat(s) [1]" in answer.json()["error"]["message"]
