"""Fixtures: a tiny random model built on the spot, and a real ``guess`` server on loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import torch
from agenthub import Action, EnvSpec, LocalServer, StepTuple, TaskId, ThreadedServer, get_plugin_host
from agenthub.testing import build_tiny_model

from agenthub_agent_hf import LoadedModel, load_model


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """A tiny model runs fastest on one thread; two OpenMP threads on a busy 2-core machine spin for ages."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Weights 25x the default spread: peaked next-token distributions, so greedy text varies
    # and the top two logits are far apart (batched and unbatched argmax cannot flip on rounding).
    return build_tiny_model(tmp_path_factory.mktemp("tiny-qwen2"), initializer_range=0.5, seed=0)


@pytest.fixture(scope="session")
def loaded(model_dir: Path) -> LoadedModel:
    return load_model(model_dir, device="cpu")


@pytest.fixture(scope="session")
def tokenizer(loaded: LoadedModel) -> Any:
    return loaded.tokenizer


@pytest.fixture(scope="module")
def guess_url() -> Iterator[str]:
    """The built-in ``guess`` env served by a real ``agenthub serve`` child process."""
    with LocalServer("guess") as server:
        yield server.url


class NumberedGuess:
    """``guess`` with the task id in the first observation, so that greedy episodes differ from the start."""

    def __init__(self) -> None:
        self.env = get_plugin_host().env("guess").make()

    def reset(
        self, *, task_id: TaskId | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        text, info = self.env.reset(task_id=task_id, seed=seed, options=options)
        return f"Game {task_id}. {text}", info

    def step(self, action: Action) -> StepTuple:
        return self.env.step(action)

    def close(self) -> None:
        self.env.close()


@pytest.fixture(scope="module")
def numbered_guess_url() -> Iterator[str]:
    guess = get_plugin_host().env("guess")
    spec = EnvSpec(
        name="guess-numbered",
        factory=NumberedGuess,
        splits=guess.resolved_splits(),
        default_max_turns=guess.default_max_turns,
        instructions=guess.instructions,
    )
    server = ThreadedServer(spec).start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def score(loaded: LoadedModel) -> Callable[[list[int]], list[float]]:
    """``score(ids)[i]`` = log p(ids[i] | ids[:i]) from one fresh, unbatched forward pass (``[0]`` is 0.0)."""

    def logprobs(ids: list[int]) -> list[float]:
        with torch.inference_mode():
            logits = loaded.model(torch.tensor([ids])).logits[0].float()
        picked = torch.log_softmax(logits[:-1], dim=-1).gather(1, torch.tensor(ids[1:])[:, None]).squeeze(1)
        return [0.0, *picked.tolist()]

    return logprobs
