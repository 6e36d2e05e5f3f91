"""A framework's prerequisites: everything missing, in one message that says what to do."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agenthub import TrainerSpec, hookimpl
from agenthub.cli import plugin_catalogue
from agenthub.cli.plugin_catalogue import cpu_trainers_in_checkout, shipped_cpu_trainers
from agenthub.plugins import PluginHost, set_plugin_host
from agenthub.training import FrameworkMissing, FrameworkNeeds, check_framework, framework_problems
from agenthub.training.prerequisites import missing_modules

ROOT = Path(__file__).resolve().parents[2]
NEEDS = FrameworkNeeds(
    trainer="bigrl",
    framework="BigRL 2",
    needs_gpu=True,
    modules={"json": "(stdlib)", "bigrl_transfer_queue": "bigrl-tq==0.1"},
    gpu_modules={"bigrl_flash.kernels": "bigrl-flash==2.0"},
    why_gpu="It would wait forever for GPU bundles.",
)


class Trainers:
    """Two trainers, one of which says it trains on a CPU (no core module lists trainers by name)."""

    @hookimpl
    def agenthub_register_trainers(self, register: Callable[[TrainerSpec], None]) -> None:
        register(TrainerSpec(name="bigrl", factory=object))
        register(TrainerSpec(name="tinyrl", factory=object, trains_on_cpu=True))


@pytest.fixture
def trainers() -> Iterator[None]:
    set_plugin_host(PluginHost(load_entry_points=False, extra_plugins=[Trainers()]))
    yield
    set_plugin_host(None)


def test_without_a_gpu_every_missing_piece_is_named_once_with_what_to_do(trainers: None) -> None:
    with pytest.raises(FrameworkMissing) as refused:
        check_framework(NEEDS, gpu=False)
    message = str(refused.value)
    assert message.splitlines()[0] == "trainer=bigrl cannot start on this machine:"
    assert "  - BigRL 2 needs an NVIDIA GPU with CUDA and this machine has none. It would wait forever" in message
    assert "bigrl_transfer_queue (from bigrl-tq==0.1)" in message
    assert "`agenthub install trainer-bigrl --variant cpu`" in message
    assert "bigrl_flash" not in message  # GPU-only modules matter only where there is a GPU
    assert "--dry-run" in message and "to train on a CPU, use trainer=tinyrl." in message


def refusal_with_no_trainer_installed() -> str:
    """check_framework's refusal on a machine without a GPU, where no trainer plugin is installed."""
    set_plugin_host(PluginHost(load_entry_points=False))
    try:
        with pytest.raises(FrameworkMissing) as refused:
            check_framework(NEEDS, gpu=False)
    finally:
        set_plugin_host(None)
    return str(refused.value)


def test_with_no_cpu_trainer_installed_the_refusal_names_the_first_party_ones_to_install() -> None:
    """The first-party catalogue (package data, from the trainers' pyprojects) names them, not core's code."""
    shipped = shipped_cpu_trainers()
    assert shipped == cpu_trainers_in_checkout(ROOT / "plugins") and shipped, "regenerate first_party_plugins.toml"
    message = refusal_with_no_trainer_installed()
    for name in shipped:
        assert f"`agenthub install trainer-{name} --variant cpu`" in message
        assert f"trainer={name}" in message


def test_with_no_cpu_trainer_known_at_all_the_refusal_says_what_one_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin_catalogue, "shipped_cpu_trainers", list)  # a core built without the catalogue
    message = refusal_with_no_trainer_installed()
    assert "no other trainer installed here trains on a CPU" in message
    assert "install a trainer plugin that does (its TrainerSpec sets trains_on_cpu)" in message


def test_with_a_gpu_its_modules_are_checked_too_and_the_gpu_variant_is_named() -> None:
    problems = framework_problems(NEEDS, gpu=True)
    assert len(problems) == 1
    assert "bigrl_transfer_queue (from bigrl-tq==0.1), bigrl_flash.kernels (from bigrl-flash==2.0)" in problems[0]
    assert "--variant gpu" in problems[0]


def test_a_framework_that_has_what_it_needs_starts() -> None:
    check_framework(FrameworkNeeds(trainer="ok", framework="OK", modules={"json": "(stdlib)"}), gpu=False)


def test_a_submodule_of_a_missing_package_counts_as_missing() -> None:
    assert missing_modules({"json.decoder": "-", "no_such_pkg.sub": "nsp"}) == {"no_such_pkg.sub": "nsp"}
