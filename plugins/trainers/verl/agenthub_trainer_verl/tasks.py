"""Which tasks the env offers: asked of the running servers, or of an in-process server of the env."""

from __future__ import annotations

from agenthub import ConfigError, EnvInfo, SyncEnvClient, TaskList, ThreadedServer, get_plugin_host

from agenthub_trainer_verl.config import VerlConfig


def list_tasks(config: VerlConfig, splits: list[str]) -> tuple[EnvInfo, dict[str, TaskList]]:
    """The env's description and the task listing of each of ``splits``."""
    if config.url:
        return _ask(config.url[0], config, splits)
    with ThreadedServer(get_plugin_host().env(config.env)) as server:  # unknown env: fails with suggestions
        return _ask(server.url, config, splits)


def _ask(url: str, config: VerlConfig, splits: list[str]) -> tuple[EnvInfo, dict[str, TaskList]]:
    with SyncEnvClient(url, token=config.token) as client:
        info = client.info()
        if info.name != config.env:
            raise ConfigError(f"the server at {url} serves env {info.name!r}, not {config.env!r}; fix env= or url=")
        known = set(info.splits)
        missing = [s for s in splits if s not in known]
        if missing:
            raise ConfigError(f"env {config.env!r} has no split {missing[0]!r}; its splits: {', '.join(sorted(known))}")
        return info, {split: client.tasks(split) for split in splits}
