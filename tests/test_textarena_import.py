"""``env=textarena:NAME``: TextArena's real games served over real servers on loopback."""

from __future__ import annotations

import pytest

pytest.importorskip("textarena")

import httpx

from agenthub import SyncEnvClient, ThreadedServer, get_plugin_host
from agenthub.cli.plugins_command import importer_records
from agenthub.errors import ConfigError
from agenthub.service.settings import ServiceSettings
from agenthub.testing.conformance import check_env
from agenthub.textarena_import import TextArenaEnv, TextArenaSoloEnv, textarena_env_spec


@pytest.mark.parametrize("game", ["TicTacToe-v0", "ConnectFour-v0", "KuhnPoker-v0"])
def test_two_player_games_pass_every_conformance_check_through_a_server(game: str) -> None:
    report = check_env(f"textarena:{game}", sessions=4)
    assert report.passed, report.summary()
    for check in ("seats", "seat_rewards", "session_isolation", "reset_determinism"):
        assert report.result(check).status == "passed", report.summary()


def test_a_tictactoe_game_is_played_seat_by_seat_to_each_seats_reward() -> None:
    spec = get_plugin_host().env("textarena:TicTacToe-v0")
    assert (spec.players, spec.seats) == (2, ("Player 0", "Player 1"))
    with ThreadedServer(spec, ServiceSettings()) as server, SyncEnvClient(server.url) as client:
        info = client.info()
        assert (info.players, info.version) == (2, "textarena-0.7.4")
        session = client.create_session(task_id=7)
        assert session.seat == 0 and "[GAME] You are Player 0 in Tic Tac Toe." in session.observation
        wrong = httpx.post(f"{server.url}/v1/sessions/{session.id}/step", json={"action": "[0]", "seat": 1})
        assert wrong.status_code == 409 and wrong.json()["error"]["code"] == "not_your_turn"
        seat = session.seat
        for move in ("[0]", "4", "[1]", "[8]"):  # a move without brackets is bracketed, as TextArena's wrapper does
            result = client.step(session.id, move, seat=seat)
            assert not result.done and result.seat == 1 - seat
            assert "[Player" in result.observation  # the opponent's move, then the board
            seat = result.seat
        final = client.step(session.id, "[2]", seat=0)  # the top row
        assert (final.terminated, final.reward, final.rewards) == (True, 1.0, {"0": 1.0, "1": -1.0})
        assert final.observations is not None
        assert "Game over (you won)" in final.observations["0"] and "Game over (you lost)" in final.observations["1"]
        assert final.info["game_info"]["0"]["reason"] == "Player 0 has won!"


def test_a_one_player_game_is_served_as_a_single_player_env() -> None:
    spec = get_plugin_host().env("textarena:GuessTheNumber-v0")
    assert spec.players == 1
    env = spec.make()
    assert isinstance(env, TextArenaSoloEnv)
    text, info = env.reset(task_id=3)
    assert "Guess The Number" in text and info == {}
    low, high = 1, 20
    for _ in range(10):  # binary search on the game's own hints
        guess = (low + high) // 2
        text, reward, terminated, _, info = env.step(f"[{guess}]")
        if terminated:
            break
        if "higher" in text.lower().rsplit("[game]", 1)[-1]:
            low = guess + 1
        else:
            high = guess - 1
    assert terminated and reward == 1.0 and info["won"] is True
    env.close()
    env.close()


def test_each_session_draws_from_its_own_random_state() -> None:
    """Kuhn Poker deals from Python's global random on every round: two sessions interleaved deal as alone."""

    def deals(interleaved: bool) -> list[str]:
        first, second = TextArenaEnv("KuhnPoker-v0", 2), TextArenaEnv("KuhnPoker-v0", 2)
        seen = []
        for env in (first, second):
            env.reset(task_id=5)
        for _ in range(6):
            for env in (first, second) if interleaved else (first,):
                seat = env.game.state.current_player_id
                step = env.step(seat, "[check]")
                if env is first:
                    seen.append(next(iter(step.observations.values())))
        return seen

    assert deals(interleaved=True) == deals(interleaved=False)


def test_unknown_games_are_refused_with_the_near_names() -> None:
    with pytest.raises(ConfigError, match="TextArena has no game 'TicTacToe-v9'; did you mean TicTacToe-v0"):
        textarena_env_spec("textarena:TicTacToe-v9")


def test_agenthub_plugins_lists_the_importer() -> None:
    records = {r["name"]: r for r in importer_records()}
    assert records["textarena"]["version"] == "0.7.4"
    assert records["textarena"]["registered"] == {"env": ["textarena:NAME"]}
