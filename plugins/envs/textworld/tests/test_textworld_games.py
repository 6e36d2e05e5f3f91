"""The game cache: generation on a miss, reuse, safety under concurrent misses, and where it lives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agenthub_env_textworld import games
from agenthub_env_textworld.__main__ import main as pregenerate_main
from agenthub_env_textworld._worker import RESEED_STEP
from agenthub_env_textworld.games import CACHE_ENV_VAR, GameCache, default_cache_dir
from agenthub_env_textworld.generation import (
    WORKERS_ENV_VAR,
    GenerationError,
    GeneratorPool,
    default_workers,
    generator_pool,
)
from agenthub_env_textworld.tasks import game_spec, task_id

CHEAP = game_spec(task_id("train", "treasure_hunter", 1, 0))
"""The cheapest game to generate (one room to cross, about a second)."""

NO_QUEST_AT_FIRST_SEED = 7006
"""A treasure-hunter level-3 task whose own seed gives a map without room for the quest."""


class CountingPool:
    """A spy around the real generator pool: counts the games this process generates."""

    def __init__(self) -> None:
        self.pool = generator_pool()
        self.calls = 0
        self._lock = threading.Lock()

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self.calls += 1
        return self.pool.generate(*args, **kwargs)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingPool:
    spy = CountingPool()
    monkeypatch.setattr(games, "generator_pool", lambda: spy)
    return spy


def leftovers(cache: GameCache) -> list[str]:
    return sorted(p.name for p in cache.dir.iterdir() if p.name.startswith(".tmp-"))


def test_a_miss_generates_the_game_and_later_uses_reuse_it(tmp_path: Path, counting: CountingPool) -> None:
    cache = GameCache(tmp_path)
    assert not cache.cached(CHEAP)
    path = cache.ensure(CHEAP)
    assert path == cache.game_file(CHEAP) and path.name == "game.z8"
    assert sorted(p.name for p in path.parent.iterdir()) == ["game.json", "game.z8"]
    stamp = (path.stat().st_ino, path.stat().st_mtime_ns)
    assert GameCache(tmp_path).ensure(CHEAP) == path  # another instance, as another session would have
    assert cache.ensure(CHEAP) == path
    assert counting.calls == 1
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == stamp
    assert leftovers(cache) == []
    walkthrough = cache.walkthrough(CHEAP)
    assert len(walkthrough) == 1 and walkthrough[0].startswith("take ")


def test_threads_that_miss_the_same_game_generate_it_once(tmp_path: Path, counting: CountingPool) -> None:
    cache = GameCache(tmp_path)
    with ThreadPoolExecutor(max_workers=6) as pool:
        paths = list(pool.map(lambda _: cache.ensure(CHEAP), range(6)))
    assert set(paths) == {cache.game_file(CHEAP)}
    assert counting.calls == 1
    assert leftovers(cache) == []


_PROCESS = """
import json, sys
from agenthub_env_textworld import games
from agenthub_env_textworld.__main__ import main as pregenerate_main
from agenthub_env_textworld.tasks import game_spec
calls = []
real = games.generator_pool
class Spy:
    def generate(self, *args, **kwargs):
        calls.append(1)
        return real().generate(*args, **kwargs)
games.generator_pool = lambda: Spy()
path = games.GameCache(sys.argv[1]).ensure(game_spec(int(sys.argv[2])))
print(json.dumps({"generated": len(calls), "path": str(path)}))
"""


def test_processes_that_miss_the_same_game_generate_it_once_and_print_nothing_else(tmp_path: Path) -> None:
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _PROCESS, str(tmp_path), str(CHEAP.task_id)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = []
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        lines = out.splitlines()
        assert len(lines) == 1, f"stdout carried more than the one result line: {out!r}"
        outputs.append(json.loads(lines[0]))
    assert sum(o["generated"] for o in outputs) == 1
    assert {o["path"] for o in outputs} == {str(GameCache(tmp_path).game_file(CHEAP))}
    assert leftovers(GameCache(tmp_path)) == []


def test_a_failed_generation_leaves_no_partial_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A double stands in for the generator: it writes half a game, then fails, as a crash would."""

    class HalfWriter:
        def generate(self, challenge: str, settings: dict[str, Any], seed: int, path: str, **_: Any) -> Any:
            Path(path).write_bytes(b"half a story file")
            raise GenerationError("the generator fell over")

    cache = GameCache(tmp_path)
    monkeypatch.setattr(games, "generator_pool", lambda: HalfWriter())
    with pytest.raises(GenerationError, match="fell over"):
        cache.ensure(CHEAP)
    assert not cache.game_dir(CHEAP).exists()
    assert leftovers(cache) == []
    monkeypatch.undo()
    (cache.dir / f".tmp-{CHEAP.name}-from-a-killed-process").mkdir()
    assert cache.ensure(CHEAP).stat().st_size > 1000
    assert leftovers(cache) == []  # the next generation of the game clears what a dead writer left


def test_a_seed_without_room_for_the_quest_moves_to_the_next_seeds_in_order(tmp_path: Path) -> None:
    spec = game_spec(NO_QUEST_AT_FIRST_SEED)
    generated = generator_pool().generate(
        spec.challenge, spec.settings, spec.seed, str(tmp_path / "game.z8"), timeout=120
    )
    assert generated.seed != spec.seed and (generated.seed - spec.seed) % RESEED_STEP == 0
    walkthrough = GameCache(tmp_path / "cache").walkthrough(spec)
    assert walkthrough and walkthrough[-1].startswith("take ")


def test_a_generation_over_its_timeout_is_stopped_with_advice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    private = GeneratorPool(1)  # the worker it stops is its own, not one the other tests keep warm
    monkeypatch.setattr(games, "generator_pool", lambda: private)
    with pytest.raises(GenerationError, match="generation_timeout"):
        GameCache(tmp_path, timeout=0.05).ensure(game_spec(task_id("train", "cooking", 5, 0)))
    assert leftovers(GameCache(tmp_path)) == []
    private.shutdown()
    with pytest.raises(GenerationError, match="shut down"):
        private.generate("tw-coin_collector", {"level": 1}, 0, str(tmp_path / "game.z8"), timeout=60)


def test_cache_dir_comes_from_the_argument_then_the_env_var_then_xdg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "from-env"))
    assert default_cache_dir() == tmp_path / "from-env"
    assert GameCache(tmp_path / "explicit").root == tmp_path / "explicit"
    monkeypatch.delenv(CACHE_ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "agenthub" / "textworld"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "agenthub" / "textworld"
    assert GameCache().dir.parent == default_cache_dir()
    assert GameCache().dir.name.startswith("textworld-1.7.0-")


def test_an_unwritable_cache_dir_says_how_to_choose_another(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match=f"pass a writable cache_dir= or set \\${CACHE_ENV_VAR}"):
        GameCache(blocker).ensure(CHEAP)


def test_a_non_positive_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        GameCache(os.devnull, timeout=0)


def test_pregenerate_fills_the_cache_and_skips_what_is_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["pregenerate", "--cache-dir", str(tmp_path), "--split", "train", "--family", "treasure_hunter"]
    args += ["--level", "1", "--count", "2"]
    assert pregenerate_main(args) == 0
    assert capsys.readouterr().out.startswith("2 games, 2 to generate into ")
    cache = GameCache(tmp_path)
    assert all(cache.cached(game_spec(task_id("train", "treasure_hunter", 1, i))) for i in (0, 1))
    assert pregenerate_main(args) == 0
    assert capsys.readouterr().out.startswith("2 games, 0 to generate into ")


def test_pregenerate_refuses_a_count_beyond_the_split(capsys: pytest.CaptureFixture[str]) -> None:
    assert pregenerate_main(["pregenerate", "--split", "test", "--count", "101"]) == 2
    assert "--count must be 1 to 100 for split 'test'" in capsys.readouterr().err


def test_python_dash_m_runs_the_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agenthub_env_textworld", "--help"], capture_output=True, text=True, check=True
    )
    assert "pregenerate" in result.stdout


def test_generator_count_comes_from_the_env_var_and_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKERS_ENV_VAR, "3")
    assert default_workers() == 3
    for bad in ("0", "many"):
        monkeypatch.setenv(WORKERS_ENV_VAR, bad)
        with pytest.raises(ValueError, match=f"\\${WORKERS_ENV_VAR} must be a positive integer"):
            default_workers()
    monkeypatch.delenv(WORKERS_ENV_VAR)
    assert 1 <= default_workers() <= 4
    with pytest.raises(ValueError, match="max_workers must be >= 1"):
        GeneratorPool(0)
