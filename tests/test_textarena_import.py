"""``env=textarena:NAME``: TextArena's real games served over real servers on loopback."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("textarena")

import httpx
import nltk

from agenthub import SyncEnvClient, ThreadedServer, get_plugin_host
from agenthub.cli.plugins_command import importer_records
from agenthub.errors import ConfigError
from agenthub.service.settings import ServiceSettings
from agenthub.testing import MEGABYTE_PARSE_CPU_S, cpu_seconds_at_most
from agenthub.testing.conformance import check_env
from agenthub.textarena_import import (
    GameUnavailableError,
    TextArenaEnv,
    TextArenaSoloEnv,
    make_game,
    textarena_env_spec,
)


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


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Chess's source parses on Python 3.12")
def test_a_game_whose_source_needs_python_312_is_refused_in_one_line_by_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agenthub", "check", "env=textarena:Chess-v0"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith(
        "agenthub check: error: textarena:Chess-v0 needs Python >= 3.12: TextArena's source "
        "(textarena/envs/Chess/env.py, line 62) uses f-strings that Python 3.11 cannot parse"
    )


def _nltk_words_missing() -> bool:
    try:
        nltk.data.find("corpora/words")
    except LookupError:
        return True
    return False


@pytest.mark.skipif(not _nltk_words_missing(), reason="NLTK's words corpus is installed here")
def test_a_game_that_downloads_data_at_import_is_refused_without_reaching_the_network() -> None:
    real = nltk.download
    with pytest.raises(GameUnavailableError) as refused:
        make_game("Wordle-v0")
    assert str(refused.value) == (
        "textarena:Wordle-v0 downloads NLTK data (averaged_perceptron_tagger_eng, words) when it is imported, "
        "and nothing may reach the network at run time; fetch it once with `python -m nltk.downloader "
        "averaged_perceptron_tagger_eng words`, then the game is served offline"
    )
    # a variant finds the module imported already: NLTK's own LookupError names what is missing
    with pytest.raises(GameUnavailableError, match=r"Wordle-v0-hardcore downloads NLTK data \(words\)"):
        make_game("Wordle-v0-hardcore")
    assert nltk.download == real  # put back after each call into TextArena


@pytest.mark.parametrize(
    ("game", "cause"),
    [
        ("Countdown-v0", "when invalid moves end the game it gives a reward that is not a number"),
        ("CharacterConclave-v0", "the game raises TypeError on an invalid move"),
        ("Klondike-v0", "TextArena's source does not parse on Python"),
        ("Taboo-v0-city/country", "an agenthub env name cannot hold the '/'"),
    ],
)
def test_games_that_cannot_serve_are_refused_at_lookup_with_the_cause(game: str, cause: str) -> None:
    with pytest.raises(GameUnavailableError, match=cause) as refused:
        get_plugin_host().env(f"textarena:{game}")
    assert "\n" not in str(refused.value)


def test_a_game_that_calls_a_hosted_model_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    with pytest.raises(GameUnavailableError, match=r"Debate-v0 is not served: the game calls a hosted model"):
        textarena_env_spec("Debate-v0")


def test_a_megabyte_action_is_answered_in_well_under_a_second() -> None:
    spec = get_plugin_host().env("textarena:TicTacToe-v0")
    assert spec.max_action_chars == 2_000  # Bandit's and ColonelBlotto's parsers are quadratic
    with ThreadedServer(spec, ServiceSettings()) as server, SyncEnvClient(server.url) as client:
        session = client.create_session(task_id=2)
        with cpu_seconds_at_most(MEGABYTE_PARSE_CPU_S, "a megabyte of brackets"):  # the server is a thread here
            result = client.step(session.id, "[" * 1_000_000, seat=session.seat)
        assert result.info["invalid_action"] is True and not result.done and result.seat == session.seat
        assert client.step(session.id, "[4]", seat=session.seat).seat != session.seat  # the game goes on
