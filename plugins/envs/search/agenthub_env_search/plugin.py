"""Registers the ``search`` env, its oracle and one-search baseline, and ``agenthub serve-retriever``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib import resources

from agenthub import AgentSpec, CommandSpec, EnvSpec, hookimpl

from agenthub_env_search import __version__
from agenthub_env_search.tasks import SPLITS

INSTRUCTIONS = resources.files(__package__).joinpath("prompts/system.md").read_text(encoding="utf-8")


@hookimpl
def agenthub_register_envs(register: Callable[[EnvSpec], None]) -> None:
    register(
        EnvSpec(
            name="search",
            instructions=INSTRUCTIONS,
            factory="agenthub_env_search.env:SearchEnv",
            splits=SPLITS,
            default_max_turns=10,
            description="Deep Search (Search-R1, AgentGym-RL): multi-hop QA by <search> over BM25, then <answer>.",
            oracle="search-oracle",
            version=__version__,
            # The reply parser is linear (tested on 1 MB); this bounds its work while leaving room for a
            # reasoning model's long <think> (Search-R1's own replies are at most 500 tokens).
            max_action_chars=65_536,
        )
    )


@hookimpl
def agenthub_register_agents(register: Callable[[AgentSpec], None]) -> None:
    register(
        AgentSpec(
            name="search-oracle",
            factory="agenthub_env_search.agents:SearchOracle",
            description="Searches each entity of the gold chain by its title, then answers.",
            env="search",
        )
    )
    register(
        AgentSpec(
            name="search-one-shot",
            factory="agenthub_env_search.agents:OneSearchBaseline",
            description="Baseline: searches the question once and answers from the top passage.",
            env="search",
        )
    )


def _configure(parser: argparse.ArgumentParser) -> None:
    from agenthub_env_search.service import configure

    configure(parser)


def _run(args: argparse.Namespace) -> int:
    from agenthub_env_search.service import run

    return run(args)


@hookimpl
def agenthub_register_commands(register: Callable[[CommandSpec], None]) -> None:
    register(
        CommandSpec(
            "serve-retriever",
            "Serve a BM25 index over a FlashRAG corpus (Search-R1's /retrieve API) for search env servers.",
            _configure,
            _run,
            __version__,
        )
    )
