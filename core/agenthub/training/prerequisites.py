"""What a training framework needs on this machine, checked before it starts, reported in one message.

A GPU-only framework started on a machine without one does not fail cleanly:
verl asks Ray for GPU bundles and waits forever, others stop deep inside a Ray
worker with a traceback. A trainer plugin declares what its framework needs
(a GPU, the modules its trainer imports, each with the pip requirement that
provides it) and calls :func:`check_framework` first; every missing piece is
named in one :class:`FrameworkMissing` error, with what to do about it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field

from agenthub.errors import ConfigError


class FrameworkMissing(ConfigError):
    """The framework cannot run here; the message lists everything that is missing."""


@dataclass(frozen=True)
class FrameworkNeeds:
    """What one trainer's framework needs: ``modules`` maps an importable module to its pip requirement."""

    trainer: str
    framework: str
    needs_gpu: bool = False
    modules: Mapping[str, str] = field(default_factory=dict)
    gpu_modules: Mapping[str, str] = field(default_factory=dict)
    """Needed only with a GPU (the inference engine, flash-attn): checked when there is one."""
    why_gpu: str = ""
    """One sentence: what the framework does without a GPU (it matters whether it fails or hangs)."""


def gpu_available() -> bool:
    """A CUDA GPU that torch can use; without torch installed, whether ``nvidia-smi`` exists."""
    if importlib.util.find_spec("torch") is None:
        return shutil.which("nvidia-smi") is not None
    import torch

    return bool(torch.cuda.is_available())


def module_found(name: str) -> bool:
    """Whether module ``name`` is installed, found without running any package's ``__init__``.

    ``importlib.util.find_spec("a.b")`` imports ``a`` first, and importing a framework is not free of
    effects: AReaL's ``areal/__init__`` creates cache folders under /tmp. A dry run writes nothing, so
    each level is looked up in its parent's folders instead (an already-imported module is found as is).
    """
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
        for depth in range(2, len(parts) + 1):
            if spec is None or spec.submodule_search_locations is None:
                return False
            spec = importlib.machinery.PathFinder.find_spec(
                ".".join(parts[:depth]), list(spec.submodule_search_locations)
            )
    except (ImportError, ValueError):
        return False
    return spec is not None


def missing_modules(modules: Mapping[str, str]) -> dict[str, str]:
    """The modules of ``modules`` that cannot be imported here (a missing parent package counts)."""
    return {module: requirement for module, requirement in modules.items() if not module_found(module)}


def framework_problems(needs: FrameworkNeeds, *, gpu: bool | None = None) -> list[str]:
    """Every reason the framework cannot run here, as sentences; empty when it can."""
    gpu = gpu_available() if gpu is None else gpu
    problems: list[str] = []
    if needs.needs_gpu and not gpu:
        why = f" {needs.why_gpu}" if needs.why_gpu else ""
        problems.append(f"{needs.framework} needs an NVIDIA GPU with CUDA and this machine has none.{why}")
    wanted = {**needs.modules, **(needs.gpu_modules if gpu else {})}
    if missing := missing_modules(wanted):
        listed = ", ".join(f"{module} (from {requirement})" for module, requirement in missing.items())
        variant = "gpu" if gpu else "cpu"
        problems.append(
            f"{needs.framework}'s trainer imports modules that are not installed: {listed}. Install them with "
            f"`agenthub install trainer-{needs.trainer} --variant {variant}`"
        )
    return problems


def check_framework(needs: FrameworkNeeds, *, gpu: bool | None = None) -> None:
    """Raise :class:`FrameworkMissing` naming everything missing; return when the framework can start."""
    problems = framework_problems(needs, gpu=gpu)
    if not problems:
        return
    lines = [f"trainer={needs.trainer} cannot start on this machine:", *(f"  - {p}" for p in problems)]
    if needs.needs_gpu and not (gpu_available() if gpu is None else gpu):
        lines.append(
            f"Add --dry-run to see the settings and the exact command it would run; {_cpu_hint(needs.trainer)}"
        )
    raise FrameworkMissing("\n".join(lines))


def cpu_trainers() -> list[str]:
    """The installed trainers whose spec says they train on a CPU (``TrainerSpec.trains_on_cpu``)."""
    from agenthub.plugins import get_plugin_host  # the host loads every plugin: only for a refusal

    host = get_plugin_host()
    return [name for name in host.trainers.names() if host.trainer(name).trains_on_cpu]


def _cpu_hint(trainer: str) -> str:
    others = [f"trainer={name}" for name in cpu_trainers() if name != trainer]
    if others:
        return f"to train on a CPU, use {' or '.join(others)}."
    from agenthub.cli.plugin_catalogue import shipped_cpu_trainers

    first_party = [name for name in shipped_cpu_trainers() if name != trainer]
    if first_party:
        installs = " or ".join(f"`agenthub install trainer-{name} --variant cpu`" for name in first_party)
        runs = " or ".join(f"trainer={name}" for name in first_party)
        return f"to train on a CPU, install a trainer that does ({installs}) and use {runs}."
    return (
        "no other trainer installed here trains on a CPU: install a trainer plugin that does (its TrainerSpec "
        "sets trains_on_cpu) and run it instead."
    )
