"""``agenthub install NAME...`` / ``agenthub uninstall NAME...``: pip (or uv), in this interpreter, with short names.

``sciworld``, ``env-sciworld`` and ``agenthub-env-sciworld`` name the same plugin (a bare name's kind is
learnt from the plugin distributions of the checkout, the ``--find-links`` folders and this interpreter,
else from the first-party list core ships: :mod:`agenthub.cli.plugin_catalogue`); a local path or wheel is
installed as is. In a source checkout, each of them installs the checkout's ``plugins/envs/sciworld`` unless a
version is asked for (``agenthub-env-sciworld==0.1.0``); elsewhere, the distribution from the package index, or from
``--index-url`` / ``--find-links``, which are passed to every pip (or uv) command.

A plugin that ships an install recipe (``PACKAGE/install.toml``, see :mod:`agenthub.install_recipe`)
is installed by running its steps for one variant (``cpu`` or ``gpu``); the others go in one plain
``pip install``. A trainer from the package index is installed with ``--no-deps`` first, so that its
recipe can be read from the installed package.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import agenthub
from agenthub import install_recipe
from agenthub._version import __version__
from agenthub.cli import plugin_catalogue
from agenthub.errors import ConfigError, did_you_mean
from agenthub.install_recipe import LoadedRecipe, Step, Variant
from agenthub.specs import CommandSpec

KINDS = ("env", "agent", "trainer")
FIRST_PARTY: Mapping[str, str] = plugin_catalogue.LazyCatalogue(lambda: _checkout_plugins())
"""Short name -> kind of the plugins this checkout holds (and those installed, and core's shipped first-party
list), so that ``agenthub install sciworld`` needs no kind: read on first use, never listed by hand."""

_SHORT = re.compile(r"^(env|agent|trainer)-([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?(.*)$")
_FULL = re.compile(
    r"^agenthub[-_.](env|agent|trainer)[-_.]([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?(.*)$", re.IGNORECASE
)
_BARE = re.compile(r"^([a-z][a-z0-9_-]*)(\[[^\]]*\])?(.*)$")
_PATH_EXTRAS = re.compile(r"^(.*?)(\[[A-Za-z0-9._,-]*\])?$")


def _checkout_root() -> Path | None:
    """The source checkout this agenthub runs from (it has ``pyproject.toml`` and ``plugins/``), if it does."""
    root = Path(agenthub.__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "plugins").is_dir() else None


def _checkout_plugins() -> Path | None:
    root = _checkout_root()
    return root / "plugins" if root else None


def _catalogue(find_links: Sequence[str] = ()) -> Mapping[str, str]:
    """The known plugins, with those in the ``--find-links`` folders."""
    return plugin_catalogue.catalogue(_checkout_plugins(), find_links) if find_links else FIRST_PARTY


def _short_names(known: Mapping[str, str] = FIRST_PARTY) -> list[str]:
    return [f"{kind}-{name}" for name, kind in known.items()]


def _known(known: Mapping[str, str] = FIRST_PARTY) -> str:
    return ", ".join(_short_names(known)) or "none found (no checkout, wheelhouse or installed plugin)"


def _is_path(name: str) -> bool:
    return "/" in name or name.startswith(".") or Path(_PATH_EXTRAS.match(name).group(1)).exists()  # type: ignore[union-attr]


@dataclass(frozen=True)
class Target:
    """One NAME of the command line, resolved."""

    name: str
    requirement: str
    """What a plain ``pip install`` is given: a path (with extras), a wheel, or a distribution spec."""
    extras: tuple[str, ...] = ()
    project: Path | None = None
    """A source project on disk (the checkout's ``plugins/...`` or a path)."""
    wheel: Path | None = None
    in_checkout: bool = False
    distribution: str | None = None
    """The distribution's name, for an index install (whose recipe is read once it is installed)."""
    kind: str | None = None

    @property
    def docs(self) -> str:
        if self.project is not None and (self.project / "README.md").is_file():
            return str(self.project / "README.md")
        return f"https://pypi.org/project/{self.distribution}/" if self.distribution else self.requirement


def resolve(name: str, find_links: Sequence[str] = ()) -> Target:
    """What ``name`` refers to: a checkout plugin, a path, a wheel, or a distribution on the index (a bare
    name's kind may come from the plugin wheels in ``find_links`` folders)."""
    if _is_path(name):
        raw, extras = _PATH_EXTRAS.match(name).groups()  # type: ignore[union-attr]
        path = Path(raw)
        if path.is_file() and path.suffix == ".whl":
            return Target(name, str(path.resolve()), wheel=path.resolve())
        if not (path / "pyproject.toml").is_file() and not (path / "setup.py").is_file():
            raise ConfigError(f"{name} is not a Python project (no pyproject.toml or setup.py there) nor a .whl file")
        extras_tuple = tuple(_split_extras(extras))
        return Target(name, f"{path.resolve()}{extras or ''}", extras=extras_tuple, project=path.resolve())
    kind: str
    if full := _FULL.match(name):
        # agenthub-env-sciworld is what env-sciworld and sciworld stand for: resolved the same way
        return _kind_target(name, full.group(1).lower(), full.group(2), full.group(3) or "", full.group(4))
    if name.lower().startswith(("agenthub-", "agenthub_")):
        base = re.split(r"[\[<>=!~ ;@]", name, maxsplit=1)[0]
        return Target(name, name, distribution=base)
    if short := _SHORT.match(name):
        kind, plugin, extras, version = short.group(1), short.group(2), short.group(3) or "", short.group(4)
    elif (bare := _BARE.match(name)) and bare.group(1) in (known := _catalogue(find_links)):
        plugin, extras, version = bare.group(1), bare.group(2) or "", bare.group(3)
        kind = known[plugin]
    else:
        word = _BARE.match(name)
        known = _catalogue(find_links)
        maybe = did_you_mean(word.group(1) if word else name, [*known, *_short_names(known)])
        raise ConfigError(
            f"unknown plugin {name!r}; {maybe}say its kind (env-NAME, agent-NAME or trainer-NAME, installed as "
            f"agenthub-env-NAME ...), give a local path, or choose a known one: {_known(known)}"
        )
    return _kind_target(name, kind, plugin, extras, version)


def _kind_target(name: str, kind: str, plugin: str, extras: str, version: str) -> Target:
    """``KIND-PLUGIN[extras]version``: the checkout's ``plugins/KINDs/PLUGIN`` if there is one and no version
    is asked for, else the distribution ``agenthub-KIND-PLUGIN`` from the package index (or --find-links)."""
    plugin = plugin.lower()  # distribution names ignore case; the checkout's folders are lower case
    checkout = _checkout_plugins()
    local = checkout / f"{kind}s" / plugin if checkout else None
    if local is not None and (local / "pyproject.toml").is_file() and not version:
        return Target(
            name, f"{local}{extras}", tuple(_split_extras(extras)), project=local, in_checkout=True, kind=kind
        )
    dist = f"agenthub-{kind}-{plugin}"
    return Target(name, f"{dist}{extras}{version}", tuple(_split_extras(extras)), distribution=dist, kind=kind)


def _split_extras(extras: str | None) -> list[str]:
    return [e.strip() for e in extras[1:-1].split(",") if e.strip()] if extras else []


def requirement(name: str) -> str:
    """What a plain pip install is given for ``name``: a path, or a distribution with any extras and version."""
    return resolve(name).requirement


def distribution(name: str) -> str:
    """The installed distribution's name for ``name`` (what ``pip uninstall`` needs)."""
    if _is_path(name):
        import tomllib

        try:
            return str(tomllib.loads((Path(name) / "pyproject.toml").read_text())["project"]["name"])
        except (OSError, KeyError) as exc:
            raise ConfigError(f"cannot read the project name of {name} ({exc}); uninstall it by name") from None
    base = re.split(r"[\[<>=!~ ;]", name, maxsplit=1)[0]
    if base.startswith("agenthub-"):
        return base
    if short := _SHORT.match(base):
        return f"agenthub-{short.group(1)}-{short.group(2)}"
    if base in FIRST_PARTY:
        return f"agenthub-{FIRST_PARTY[base]}-{base}"
    raise ConfigError(f"unknown plugin {name!r}: give its distribution (agenthub-env-NAME), env-NAME, or a path")


@dataclass(frozen=True)
class Installer:
    """How install commands are spelled: uv where it is available (it resolves in seconds), else pip."""

    uv: str | None

    def command(self, args: list[str], *, pip: bool = False) -> list[str]:
        if self.uv and not pip:
            return [self.uv, "pip", "install", "--python", sys.executable, *args]
        return [sys.executable, "-m", "pip", "install", *args]


def find_uv(choice: str) -> Installer:
    if choice == "pip":
        return Installer(None)
    # a virtualenv's uv sits beside its python, whether or not the virtualenv is activated
    beside = Path(sys.executable).parent / "uv"
    uv = str(beside) if beside.is_file() else shutil.which("uv")
    if choice == "uv" and not uv:
        raise ConfigError("--installer uv: no uv beside this Python or on PATH; `pip install uv`, or leave it to auto")
    return Installer(uv)


def _core(extras: list[str]) -> list[str]:
    """The running core as a requirement: its checkout, editable, in a source tree; else this version."""
    suffix = f"[{','.join(sorted(set(extras)))}]" if extras else ""
    root = _checkout_root()
    return ["-e", f"{root}{suffix}"] if root else [f"agenthub{suffix}=={agenthub.__version__}"]


def _plugin(target: Target, step: Step, *, editable: bool) -> list[str]:
    # extras name dependencies: meaningless with --no-deps, where the recipe's `test` lists stand in for them
    extras = f"[{','.join(target.extras)}]" if target.extras and not step.no_deps else ""
    if target.project is not None:
        return ["-e", f"{target.project}{extras}"] if target.in_checkout or editable else [f"{target.project}{extras}"]
    if target.wheel is not None:
        return [f"{target.wheel}{extras}"]
    assert target.distribution is not None
    return [target.requirement if not step.no_deps else re.sub(r"\[[^\]]*\]", "", target.requirement)]


def step_command(
    target: Target, loaded: LoadedRecipe, step: Step, installer: Installer, *, editable: bool, extra: list[str]
) -> list[str]:
    """One recipe step as the command that runs it."""
    wanted = [*step.requirements, *(step.test if "test" in target.extras else [])]
    core = [r for r in wanted if install_recipe.requirement_name(r) == "agenthub"]
    args: list[str] = []
    if step.constraints and loaded.folder is not None:
        args += ["-c", str(loaded.folder / step.constraints)]
    if step.no_deps:
        args.append("--no-deps")
    if step.no_build_isolation:
        args.append("--no-build-isolation")
    uses_uv = installer.uv is not None and not step.pip
    if step.compile_bytecode and uses_uv:
        args.append("--compile-bytecode")
    if core:
        args += _core([extra for r in core for extra in install_recipe.requirement_extras(r)])
    args += [r for r in wanted if r not in core]
    if step.plugin:
        args += _plugin(target, step, editable=editable)
    return installer.command([*args, *extra], pip=step.pip)


def _run(command: list[str], *, dry_run: bool) -> int:
    print("$ " + shlex.join(command), flush=True)
    return 0 if dry_run else subprocess.call(command)


def _pip(args: list[str], *, dry_run: bool) -> int:
    return _run([sys.executable, "-m", "pip", *args], dry_run=dry_run)


def _choose_variant(choice: str) -> tuple[Variant, str]:
    if choice in install_recipe.VARIANTS:
        return choice, "chosen with --variant"
    variant, why = install_recipe.detect_variant()
    return variant, f"{why}; --variant {'cpu' if variant == 'gpu' else 'gpu'} to override"


def _failed(target: Target, variant: Variant, why: str, index: int, total: int, step: Step, code: int) -> str:
    what = f" ({step.about})" if step.about else ""
    if variant == "gpu":
        advice = (
            f"This is the GPU variant ({why}): it needs CUDA and its compilers; on a machine without CUDA use "
            "--variant cpu."
        )
    else:
        advice = (
            "The cpu variant pins exact versions: install into a fresh virtualenv if packages already there "
            "conflict, and check that the package index can be reached."
        )
    return (
        f"agenthub install: step {index} of {total} of {target.name}'s {variant} recipe failed (exit {code}){what}; "
        f"its output above says why. {advice} See {target.docs}."
    )


def install_with_recipe(
    target: Target, loaded: LoadedRecipe, args: argparse.Namespace, installer: Installer, extra: list[str]
) -> int:
    variant, why = _choose_variant(args.variant)
    recipe = loaded.variant(variant)
    print(f"agenthub install: {target.name}: {variant} variant ({why}); recipe {loaded.origin}", flush=True)
    print(f"  {recipe.about}", flush=True)
    for index, step in enumerate(recipe.steps, start=1):
        if step.about:
            print(f"# {index}/{len(recipe.steps)}: {step.about}", flush=True)
        command = step_command(target, loaded, step, installer, editable=args.editable, extra=extra)
        if code := _run(command, dry_run=args.dry_run):
            print(_failed(target, variant, why, index, len(recipe.steps), step, code), file=sys.stderr)
            return code
    return 0


def _from_index(target: Target, args: argparse.Namespace, installer: Installer, extra: list[str]) -> int | None:
    """A trainer from the index: itself first (``--no-deps``), then its recipe; None if it has none."""
    assert target.distribution is not None
    spec = re.sub(r"\[[^\]]*\]", "", target.requirement)
    code = _run(installer.command(["--no-deps", spec, *extra]), dry_run=args.dry_run)
    if code:
        print(
            f"agenthub install: could not install {spec} (exit {code}). Check the name (known plugins: {_known()}), "
            "the package index, or give a local path.",
            file=sys.stderr,
        )
        return code
    loaded = install_recipe.from_installed(target.distribution)
    if loaded is None and args.dry_run:
        print(f"# {target.distribution} is not installed yet: its install recipe, if any, is read after this step")
        return 0
    return None if loaded is None else install_with_recipe(target, loaded, args, installer, extra)


def index_args(args: argparse.Namespace) -> list[str]:
    """--index-url, --extra-index-url and --find-links as pip (and uv) take them, for every install command."""
    out: list[str] = []
    if getattr(args, "index_url", None):
        out += ["--index-url", args.index_url]
    for url in getattr(args, "extra_index_url", None) or []:
        out += ["--extra-index-url", url]
    for place in getattr(args, "find_links", None) or []:
        out += ["--find-links", place]
    return out


def configure_install(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "names",
        nargs="+",
        metavar="NAME",
        help="NAME, env-NAME or agenthub-env-NAME (the same plugin: this checkout's, where there is "
        "one and no version is given), trainer-NAME[test], ./path or a .whl",
    )
    parser.add_argument("-e", "--editable", action="store_true", help="pip install -e (local paths)")
    parser.add_argument("--dry-run", action="store_true", help="print every install command; run none")
    parser.add_argument("--pip-args", default="", metavar="ARGS", help="more pip options, e.g. --pip-args='--no-deps'")
    parser.add_argument("--index-url", default=None, metavar="URL", help="the package index to use (passed to pip/uv)")
    parser.add_argument(
        "--extra-index-url", action="append", default=[], metavar="URL", help="another index (repeatable; to pip/uv)"
    )
    parser.add_argument(
        "--find-links",
        action="append",
        default=[],
        metavar="DIR_OR_URL",
        help="also look for wheels here, e.g. a local wheelhouse (repeatable; to pip/uv)",
    )
    parser.add_argument(
        "--variant",
        choices=["auto", "cpu", "gpu"],
        default="auto",
        help="which of a plugin's install recipes (install.toml) to run; auto: gpu where nvidia-smi or CUDA is found",
    )
    parser.add_argument(
        "--installer",
        choices=["auto", "uv", "pip"],
        default="auto",
        help="who runs a recipe's steps; auto: uv where it is installed (torch steps always use pip)",
    )


def run_install(args: argparse.Namespace) -> int:
    targets = [resolve(name, getattr(args, "find_links", None) or ()) for name in args.names]
    extra = [*index_args(args), *shlex.split(args.pip_args)]
    installer = find_uv(args.installer)
    plain: list[Target] = []
    with tempfile.TemporaryDirectory(prefix="agenthub-install-") as scratch:
        for target in targets:
            if target.project is not None:
                loaded = install_recipe.from_project(target.project)
            elif target.wheel is not None:
                loaded = install_recipe.from_wheel(target.wheel, Path(scratch) / target.wheel.stem)
            elif target.kind == "trainer":
                code = _from_index(target, args, installer, extra)
                if code is None:
                    plain.append(target)
                elif code:
                    return code
                continue
            else:
                loaded = None
            if loaded is None:
                plain.append(target)
            elif code := install_with_recipe(target, loaded, args, installer, extra):
                return code
    if plain and (code := _install_plain(plain, args, extra)):
        return code
    if not args.dry_run:
        print("installed; `agenthub plugins` lists what they register")
    return 0


def _install_plain(targets: list[Target], args: argparse.Namespace, extra: list[str]) -> int:
    requirements = [t.requirement for t in targets]
    code = _pip(["install", *(["-e"] if args.editable else []), *requirements, *extra], dry_run=args.dry_run)
    if code == 0:
        return 0
    from_index = [t.requirement for t in targets if t.distribution is not None]
    if from_index:
        advice = (
            f"Check the name of {', '.join(from_index)} (known plugins: {_known()}), the package index, or give a "
            "local path."
        )
    else:
        advice = f"Its output above says why; see {', '.join(t.docs for t in targets)}."
    print(f"agenthub install: pip could not install {', '.join(requirements)} (exit {code}). {advice}", file=sys.stderr)
    return code


def configure_uninstall(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="env-NAME, NAME, agenthub-env-NAME, ./path")
    parser.add_argument("--dry-run", action="store_true", help="print the pip command only")


def run_uninstall(args: argparse.Namespace) -> int:
    return _pip(["uninstall", "-y", *(distribution(n) for n in args.names)], dry_run=args.dry_run)


COMMANDS = (
    CommandSpec(
        "install",
        "Install plugins by short name (env-NAME, trainer-NAME) or path, by the recipe a plugin ships.",
        configure_install,
        run_install,
        __version__,
    ),
    CommandSpec(
        "uninstall",
        "pip uninstall plugins by short name or path.",
        configure_uninstall,
        run_uninstall,
        __version__,
    ),
)
