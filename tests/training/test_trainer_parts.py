"""What trainer plugins declare through core rather than each for itself: their registration hook, a GPU-only
framework's needs (with the engine a run generates with) and launch checks played to the horizon's longest limit."""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import pytest

from agenthub import trainer_hook
from agenthub.plugins import PluginHost
from agenthub.training import TokenLimits, check_launch_over_horizon, gpu_framework_needs


def test_one_call_registers_a_trainer_under_its_name_and_aliases() -> None:
    plugin = types.ModuleType("fake_trainer_plugin")
    plugin.agenthub_register_trainers = trainer_hook(  # type: ignore[attr-defined]
        "fake", "fake-alias", factory="fake_trainer_plugin:Trainer", description="a fake", trains_on_cpu=True
    )
    host = PluginHost(load_entry_points=False, extra_plugins=[plugin])
    assert host.records["fake_trainer_plugin"].registered == {"trainer": ["fake", "fake-alias"]}
    for name in ("fake", "fake-alias"):
        spec = host.trainer(name)
        assert (spec.factory, spec.description, spec.trains_on_cpu) == ("fake_trainer_plugin:Trainer", "a fake", True)


def prerequisites() -> types.ModuleType:
    """A plugin's ``prerequisites`` module, as verl's lists its engines."""
    module = types.ModuleType("fake_prerequisites")
    module.TRAINER_MODULES = {"fake": "fake==1"}  # type: ignore[attr-defined]
    module.GPU_MODULES = {  # type: ignore[attr-defined]
        "vllm": "fake[vllm]==1",
        "sglang": "fake[sglang]==1",
        "flash_attn": "flash-attn==2",
        "fake.rollout.vllm_server": "fake[vllm]==1",
    }
    return module


def test_a_gpu_framework_needs_a_gpu_and_only_the_engine_it_generates_with() -> None:
    needs = gpu_framework_needs(prerequisites(), trainer="fake", framework="Fake 1", why_gpu="It needs CUDA.")
    assert needs.needs_gpu and needs.modules == {"fake": "fake==1"} and len(needs.gpu_modules) == 4
    assert (needs.trainer, needs.framework, needs.why_gpu) == ("fake", "Fake 1", "It needs CUDA.")
    with_sglang = gpu_framework_needs(
        prerequisites(), trainer="fake", framework="Fake 1", why_gpu="It needs CUDA.", engine="sglang"
    )
    # the other engine's own package goes; the framework's module named after it is the framework's, and stays
    assert set(with_sglang.gpu_modules) == {"sglang", "flash_attn", "fake.rollout.vllm_server"}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The tiny model's directory, built once: the checks load its tokenizer as a trainer's would."""
    from agenthub.testing import build_tiny_model

    return str(build_tiny_model(tmp_path_factory.mktemp("tiny")))


@dataclass
class Settings:
    """What the horizon's launch checks read of a trainer's config."""

    env: str = "guess"
    model: str | None = None
    split: str = "train"
    url: list[str] | None = None
    token: str | None = None
    horizon: int | dict[str, Any] | None = None
    steps: int = 3


CURRICULUM = {"kind": "stepwise", "rounds": [1, 10], "every": 2}
"""One turn for steps 0 and 1, ten from step 2."""


@pytest.mark.parametrize(("steps", "refused"), [(2, ["max_context", "horizon"]), (3, ["max_context"])])
def test_the_launch_checks_play_to_the_horizons_longest_limit(tiny_model: str, steps: int, refused: list[str]) -> None:
    """guess is not won in one turn: a run that ends before its horizon allows more is refused, one in which it
    grows to ten turns is not (and 200 tokens of context are too few either way)."""
    report = check_launch_over_horizon(
        Settings(model=tiny_model, horizon=CURRICULUM, steps=steps),
        TokenLimits(max_tokens=16, max_context=200),
        dry_run=True,
    )
    assert [f.key for f in report.problems] == refused
