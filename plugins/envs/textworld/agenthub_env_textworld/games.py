"""The on-disk cache of generated games: where it is, and safe generation into it.

Each game is a directory ``<cache>/<version dir>/<game name>/`` holding
TextWorld's ``game.z8`` (the story file) and ``game.json`` (its logic, walkthrough and
score). A game is generated into a private temporary directory beside it and
renamed into place in one step, so a reader sees either no game or a
complete one. A lock file per game makes concurrent sessions, threads or
processes that miss the same game wait for one generation instead of each
doing it; the rename keeps the cache correct even where that lock is not
honoured (some network file systems).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

from .generation import generator_pool
from .tasks import GameSpec

CACHE_ENV_VAR = "AGENTHUB_TEXTWORLD_CACHE"
"""Overrides the default cache directory (the env's ``cache_dir`` argument overrides both)."""

LAYOUT_VERSION = 2
"""Bumped whenever the games a task id generates change; old caches are then left alone, not reused.
2: the games have no save, restore, transcript, restart or quit commands (``_worker.NO_FILE_ACTIONS``)."""

DEFAULT_GENERATION_TIMEOUT = 240.0
"""Seconds one game may take to generate: the levels here take 15 s at worst, so it only stops a stuck one."""


def default_cache_dir() -> Path:
    """``$AGENTHUB_TEXTWORLD_CACHE``, else ``$XDG_CACHE_HOME/agenthub/textworld``, else ``~/.cache/...``."""
    explicit = os.environ.get(CACHE_ENV_VAR)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agenthub" / "textworld"


class GameCache:
    """Generated games under ``root``, made on first use.

    >>> from agenthub_env_textworld.tasks import game_spec
    >>> cache = GameCache("/tmp/textworld-games")  # doctest: +SKIP
    >>> cache.ensure(game_spec(0)).name  # doctest: +SKIP
    'game.z8'
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, timeout: float = DEFAULT_GENERATION_TIMEOUT):
        if timeout <= 0:
            raise ValueError(f"the generation timeout must be > 0 seconds, got {timeout}")
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        self.timeout = timeout
        # Another textworld release may generate other games from the same seeds.
        self.dir = self.root / f"textworld-{version('textworld')}-layout{LAYOUT_VERSION}"

    def game_dir(self, spec: GameSpec) -> Path:
        return self.dir / spec.name

    def game_file(self, spec: GameSpec) -> Path:
        """Where the story file of ``spec`` is (or will be) cached."""
        return self.game_dir(spec) / "game.z8"

    def cached(self, spec: GameSpec) -> bool:
        directory = self.game_dir(spec)
        return (directory / "game.z8").is_file() and (directory / "game.json").is_file()

    def ensure(self, spec: GameSpec) -> Path:
        """The story file of ``spec``, generating the game first if it is not cached."""
        if self.cached(spec):
            return self.game_file(spec)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OSError(
                f"cannot create the textworld game cache {self.dir} ({exc}); pass a writable cache_dir= "
                f"or set ${CACHE_ENV_VAR}"
            ) from exc
        with self._locked(spec):
            if not self.cached(spec):  # nobody made it while we waited for the lock
                self._generate(spec)
        return self.game_file(spec)

    def walkthrough(self, spec: GameSpec) -> list[str]:
        """TextWorld's walkthrough of ``spec`` (the commands that win it), generating the game if needed."""
        game_json = self.ensure(spec).with_suffix(".json")
        metadata = json.loads(game_json.read_text(encoding="utf-8")).get("metadata", {})
        return [str(command) for command in metadata.get("walkthrough") or []]

    @contextlib.contextmanager
    def _locked(self, spec: GameSpec) -> Iterator[None]:
        locks = self.dir / ".locks"
        locks.mkdir(exist_ok=True)
        # flock locks an open file description: it excludes other processes and other threads alike.
        with open(locks / f"{spec.name}.lock", "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _generate(self, spec: GameSpec) -> None:
        final = self.game_dir(spec)
        if final.exists():  # an incomplete game from outside the cache's own writes; set it aside
            shutil.rmtree(final, ignore_errors=True)
        for stale in self.dir.glob(f".tmp-{spec.name}-*"):  # we hold the lock: these writers died
            shutil.rmtree(stale, ignore_errors=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".tmp-{spec.name}-", dir=self.dir))
        try:
            generator_pool().generate(
                spec.challenge, spec.settings, spec.seed, str(scratch / "game.z8"), timeout=self.timeout
            )
            (scratch / "game.ni").unlink(missing_ok=True)  # the Inform 7 source; only the compiler reads it
            missing = [name for name in ("game.z8", "game.json") if not (scratch / name).is_file()]
            if missing:
                raise OSError(f"TextWorld reported success but wrote no {', '.join(missing)} in {scratch}")
            scratch.chmod(0o755)
            try:
                os.rename(scratch, final)
            except OSError:
                if not self.cached(spec):  # lost a race to a writer that ignored the lock: theirs is as good
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
