"""A plugin's install recipe: ``install.toml`` inside its package, read by ``agenthub install``.

A trainer plugin whose framework cannot be installed with plain ``pip install`` (a CUDA build
dependency, pins that fight torch's CPU build) ships the steps that work as package data, so
they are there in a source checkout and in the published wheel alike::

    recipe = 1

    [variants.cpu]
    about = "the framework without its GPU stack: enough for the tests and --dry-run"

    [[variants.cpu.steps]]
    about = "torch's CPU build first"
    requirements = ["torch==2.13.0"]
    pip = true                      # torch only ever through pip, pinned

    [[variants.cpu.steps]]
    requirements = ["framework==1.2.3"]
    no_deps = true

    [[variants.cpu.steps]]
    plugin = true                   # the plugin itself (editable from a checkout)
    test = ["agenthub[dev]"]        # added with `agenthub install trainer-NAME[test]`

Variants are ``cpu`` and ``gpu``; each is an ordered list of steps, one install command a step.
A requirement on ``agenthub`` means the running core: its checkout, editable, in a source tree.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import tomllib
import zipfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agenthub.errors import ConfigError

RECIPE_FILE = "install.toml"
Variant = Literal["cpu", "gpu"]
VARIANTS: tuple[Variant, ...] = ("cpu", "gpu")

# name, extras, then a version specifier or URL; enough to refuse typos without the packaging library
_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._,-]*\])?\s*((?:[<>=!~]=?|===|@).*)?$")


def requirement_name(requirement: str) -> str:
    """The normalized distribution name of a requirement string (``Foo_bar[x]==1`` -> ``foo-bar``)."""
    match = _REQUIREMENT.match(requirement.strip())
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def requirement_extras(requirement: str) -> list[str]:
    match = _REQUIREMENT.match(requirement.strip())
    extras = match.group(2) if match else None
    return [extra.strip() for extra in extras[1:-1].split(",") if extra.strip()] if extras else []


def _check_requirements(values: list[str]) -> list[str]:
    for value in values:
        if not _REQUIREMENT.match(value.strip()):
            raise ValueError(f"{value!r} is not a requirement (NAME, NAME[extra], NAME==VERSION)")
        if requirement_name(value) == "torch" and not re.search(r"==\s*[0-9]", value):
            # an unpinned torch is resolved to the CUDA build: several GB, and the wrong one on a CPU
            raise ValueError(f"{value!r}: pin torch exactly (torch==X.Y.Z)")
    return values


class Step(BaseModel):
    """One install command."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    about: str = Field(default="", description="why this step exists; printed before its command")
    requirements: list[str] = Field(default_factory=list, description="what pip/uv is given")
    test: list[str] = Field(default_factory=list, description="added to this step for the [test] extra")
    plugin: bool = Field(default=False, description="the plugin itself is installed in this step")
    no_deps: bool = Field(default=False, description="--no-deps: the requirements' own dependencies are not resolved")
    pip: bool = Field(default=False, description="always pip, never uv (torch: its CPU build is found by pip only)")
    constraints: str | None = Field(default=None, description="a constraints file beside install.toml (-c)")
    compile_bytecode: bool = Field(default=False, description="uv's --compile-bytecode (pip always compiles)")
    no_build_isolation: bool = Field(default=False, description="--no-build-isolation (flash-attn builds on torch)")

    @field_validator("requirements", "test")
    @classmethod
    def _requirements(cls, values: list[str]) -> list[str]:
        return _check_requirements(values)

    @model_validator(mode="after")
    def _not_empty(self) -> Step:
        if not (self.requirements or self.test or self.plugin):
            raise ValueError("a step installs something: give requirements, test or plugin = true")
        if any(requirement_name(r) == "torch" for r in self.requirements + self.test) and not self.pip:
            raise ValueError("a step that installs torch needs pip = true (uv would resolve the CUDA build)")
        return self


class VariantRecipe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    about: str = Field(min_length=1, description="what this variant installs and what it can run")
    steps: list[Step] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_plugin_step(self) -> VariantRecipe:
        if sum(step.plugin for step in self.steps) != 1:
            raise ValueError("exactly one step has plugin = true (where the plugin itself is installed)")
        return self


class Recipe(BaseModel):
    """A plugin's ``install.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    recipe: Literal[1] = Field(description="the format's version")
    variants: dict[Variant, VariantRecipe] = Field(min_length=1)


class LoadedRecipe(BaseModel):
    """A recipe and where it came from (its directory holds any constraints file)."""

    model_config = ConfigDict(frozen=True)

    recipe: Recipe
    origin: str
    folder: Path | None = None
    """The directory of ``install.toml`` on disk; None when read from a wheel or an index download."""

    def variant(self, name: Variant) -> VariantRecipe:
        if name not in self.recipe.variants:
            have = ", ".join(self.recipe.variants)
            raise ConfigError(f"{self.origin} has no {name!r} variant (it has: {have}); choose one with --variant")
        return self.recipe.variants[name]


def parse(text: str, origin: str, folder: Path | None = None) -> LoadedRecipe:
    """Validate an ``install.toml``; errors name the file and the field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin} is not valid TOML ({exc}); fix the file") from None
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(top level)'}: {error['msg']}" for error in exc.errors()
        )
        raise ConfigError(f"{origin} is not a valid install recipe: {problems}") from None
    loaded = LoadedRecipe(recipe=recipe, origin=origin, folder=folder)
    for name, variant in recipe.variants.items():
        for index, step in enumerate(variant.steps):
            if step.constraints and (folder is None or not (folder / step.constraints).is_file()):
                raise ConfigError(
                    f"{origin}: variants.{name}.steps.{index}.constraints: {step.constraints!r} is not a file beside "
                    "install.toml; ship it as package data next to it"
                )
    return loaded


def _package_dirs(project: Path) -> list[Path]:
    return sorted(p.parent for p in project.glob("*/__init__.py"))


def from_project(project: Path) -> LoadedRecipe | None:
    """The recipe of a source project (``PACKAGE/install.toml``), or None if it has none."""
    for package in _package_dirs(project):
        path = package / RECIPE_FILE
        if path.is_file():
            return parse(path.read_text(), str(path), path.parent)
    return None


def from_wheel(wheel: Path, scratch: Path) -> LoadedRecipe | None:
    """The recipe inside a built wheel, read without installing it (its package data lands in ``scratch``)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        for member in names:
            parts = member.split("/")
            if len(parts) == 2 and parts[1] == RECIPE_FILE and f"{parts[0]}/__init__.py" in names:
                # the recipe and the data beside it (a constraints file), not the code
                for data in names:
                    if data.startswith(f"{parts[0]}/") and data.count("/") == 1 and not data.endswith(".py"):
                        archive.extract(data, scratch)
                folder = scratch / parts[0]
                return parse((folder / RECIPE_FILE).read_text(), f"{wheel}!{member}", folder)
    return None


def from_installed(distribution: str) -> LoadedRecipe | None:
    """The recipe of an installed distribution (after a ``--no-deps`` install of it), or None."""
    importlib.invalidate_caches()  # it may have been installed a moment ago, by a child process
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or []:
        parts = file.parts
        if len(parts) == 2 and parts[1] == RECIPE_FILE:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return parse(path.read_text(), str(path), path.parent)
    # an editable install lists no package files: look where its top-level packages are (not importing them)
    for name in (dist.read_text("top_level.txt") or "").split():
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            path = Path(location) / RECIPE_FILE
            if path.is_file():
                return parse(path.read_text(), str(path), path.parent)
    return None


def detect_variant() -> tuple[Variant, str]:
    """``gpu`` where an NVIDIA driver is visible, else ``cpu``; and the reason, for the output."""
    smi = shutil.which("nvidia-smi")
    if smi:
        return "gpu", f"nvidia-smi found at {smi}"
    if Path("/proc/driver/nvidia/version").is_file():
        return "gpu", "an NVIDIA driver is loaded (/proc/driver/nvidia)"
    if os.environ.get("CUDA_HOME") and Path(os.environ["CUDA_HOME"]).is_dir():
        return "gpu", f"CUDA_HOME={os.environ['CUDA_HOME']}"
    return "cpu", "no nvidia-smi on PATH, no NVIDIA driver, no CUDA_HOME"
