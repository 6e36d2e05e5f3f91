"""``agenthub install`` runs the install recipe a plugin ships (``PACKAGE/install.toml``).

Commands are checked as ``--dry-run`` prints them, in a real ``python -m agenthub`` subprocess, with
``--installer pip`` so that the expected text does not depend on whether uv is installed here. The
published-plugin path is exercised with a real wheel of a tiny plugin, built and installed (``--no-deps``)
into a child virtualenv; the failure message comes from a real pip run that cannot succeed (``--no-index``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthub import install_recipe
from agenthub.cli.install_command import FIRST_PARTY, Installer, resolve, step_command
from agenthub.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
PIP = [PY, "-m", "pip", "install"]
TRAINERS = sorted(name for name, kind in FIRST_PARTY.items() if kind == "trainer")


def agenthub(*args: str, python: str = PY, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "agenthub", *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
    )


def commands(stdout: str) -> list[list[str]]:
    """The commands a dry run printed (``$ ...`` lines), split as the shell would."""
    import shlex

    return [shlex.split(line[2:]) for line in stdout.splitlines() if line.startswith("$ ")]


def write_plugin(folder: Path, recipe: str, *, name: str = "fake", extra_data: dict[str, str] | None = None) -> Path:
    """A tiny trainer plugin project with ``recipe`` as its ``install.toml``."""
    package = folder / f"agenthub_trainer_{name}"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A tiny plugin for the install tests."""\n')
    (package / "install.toml").write_text(textwrap.dedent(recipe))
    data = ["install.toml", *(extra_data or {})]
    for file, text in (extra_data or {}).items():
        (package / file).write_text(text)
    (folder / "README.md").write_text("# fake\n")
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=69"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "agenthub-trainer-{name}"
        version = "0.1.0"
        dependencies = ["agenthub"]

        [tool.setuptools.packages.find]
        include = ["agenthub_trainer_{name}*"]

        [tool.setuptools.package-data]
        agenthub_trainer_{name} = {data!r}
        """)
    )
    return folder


SMALL = """\
recipe = 1

[variants.cpu]
about = "a small cpu recipe"

[[variants.cpu.steps]]
about = "torch first"
requirements = ["torch==2.13.0"]
pip = true

[[variants.cpu.steps]]
requirements = ["agenthub-no-such-package-for-tests==0.0.1"]
test = ["agenthub[test]"]
constraints = "pins.txt"
plugin = true

[variants.gpu]
about = "a small gpu recipe"

[[variants.gpu.steps]]
requirements = ["agenthub-no-such-package-for-tests==0.0.1"]
plugin = true
no_deps = true
"""


# ---- parsing and validation ----


@pytest.mark.parametrize("name", TRAINERS)
def test_every_first_party_trainer_ships_a_valid_recipe_with_both_variants(name: str) -> None:
    loaded = install_recipe.from_project(ROOT / "plugins" / "trainers" / name)
    assert loaded is not None
    assert set(loaded.recipe.variants) == {"cpu", "gpu"}
    assert loaded.origin.endswith(f"agenthub_trainer_{name}/install.toml")
    # the recipe is package data, so that a published wheel carries it
    pyproject = (ROOT / "plugins" / "trainers" / name / "pyproject.toml").read_text()
    assert '"install.toml"' in pyproject


@pytest.mark.parametrize(
    ("recipe", "message"),
    [
        ('recipe = 1\n[variants.cpu]\nabout = "x"\n[[variants.cpu.steps]]\nplugin = true\nrequirement = ["a"]\n',
         "variants.cpu.steps.0.requirement: Extra inputs are not permitted"),
        ('recipe = 1\n[variants.cpu]\nabout = "x"\n[[variants.cpu.steps]]\nrequirements = ["torch"]\npip = true\n'
         "plugin = true\n", "variants.cpu.steps.0.requirements: Value error, 'torch': pin torch exactly"),
        ('recipe = 1\n[variants.cpu]\nabout = "x"\n[[variants.cpu.steps]]\nrequirements = ["torch==2.13.0"]\n'
         "plugin = true\n", "a step that installs torch needs pip = true"),
        ('recipe = 1\n[variants.cpu]\nabout = "x"\n[[variants.cpu.steps]]\nrequirements = ["a==1"]\n',
         "variants.cpu: Value error, exactly one step has plugin = true"),
        ('recipe = 1\n[variants.tpu]\nabout = "x"\n[[variants.tpu.steps]]\nplugin = true\n',
         "variants.tpu.[key]: Input should be 'cpu' or 'gpu'"),
        ('recipe = 2\n[variants.cpu]\nabout = "x"\n[[variants.cpu.steps]]\nplugin = true\n',
         "recipe: Input should be 1"),
        ('recipe = 1\n[variants.cpu]\nabout = "x"\n[[variants.cpu.steps]]\nrequirements = ["not a requirement"]\n'
         "plugin = true\n", "'not a requirement' is not a requirement"),
        ('recipe = 1\n[variants.cpu]\nabout = "x"\n[[variants.cpu.steps]]\nplugin = true\nconstraints = "c.txt"\n',
         "variants.cpu.steps.0.constraints: 'c.txt' is not a file beside install.toml"),
        ("recipe = [", "is not valid TOML"),
    ],
)  # fmt: skip
def test_an_invalid_recipe_is_refused_naming_the_file_and_the_field(tmp_path: Path, recipe: str, message: str) -> None:
    path = tmp_path / "pkg" / "install.toml"
    path.parent.mkdir()
    (path.parent / "__init__.py").write_text("")
    path.write_text(recipe)
    with pytest.raises(ConfigError) as error:
        install_recipe.from_project(tmp_path)
    assert str(path) in str(error.value)
    assert message in str(error.value)


def test_a_missing_variant_names_the_ones_there(tmp_path: Path) -> None:
    recipe = 'recipe = 1\n[variants.cpu]\nabout = "x"\n[[variants.cpu.steps]]\nplugin = true\n'
    loaded = install_recipe.parse(recipe, "x/install.toml")
    with pytest.raises(ConfigError, match=r"x/install.toml has no 'gpu' variant \(it has: cpu\)"):
        loaded.variant("gpu")


def test_a_plugin_without_a_recipe_installs_with_plain_pip() -> None:
    done = agenthub("install", "--dry-run", "textcraft[test]", "--installer", "pip")
    assert done.returncode == 0, done.stderr
    assert commands(done.stdout) == [[*PIP, f"{ROOT}/plugins/envs/textcraft[test]"]]


# ---- variant selection ----


def _path_with(tmp_path: Path, *, nvidia_smi: bool) -> dict[str, str]:
    """A PATH with this Python's folder, and a stand-in ``nvidia-smi`` where asked (only its presence counts)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if nvidia_smi:
        smi = bin_dir / "nvidia-smi"
        smi.write_text("#!/bin/sh\nexit 0\n")
        smi.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CUDA_HOME"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{Path(PY).parent}{os.pathsep}/usr/bin:/bin"
    return env


@pytest.mark.skipif(Path("/proc/driver/nvidia/version").exists(), reason="this machine has an NVIDIA driver")
def test_the_variant_is_gpu_where_nvidia_smi_is_found_else_cpu_and_the_output_says_why(tmp_path: Path) -> None:
    cpu = agenthub("install", "--dry-run", "trainer-verl", env=_path_with(tmp_path, nvidia_smi=False))
    assert cpu.returncode == 0, cpu.stderr
    assert (
        "trainer-verl: cpu variant (no nvidia-smi on PATH, no NVIDIA driver, no CUDA_HOME; --variant gpu" in cpu.stdout
    )
    gpu = agenthub("install", "--dry-run", "trainer-verl", env=_path_with(tmp_path, nvidia_smi=True))
    assert gpu.returncode == 0, gpu.stderr
    assert f"trainer-verl: gpu variant (nvidia-smi found at {tmp_path / 'bin' / 'nvidia-smi'}; --variant cpu" in (
        gpu.stdout
    )
    forced = agenthub("install", "--dry-run", "verl", "--variant", "cpu", env=_path_with(tmp_path, nvidia_smi=True))
    assert "verl: cpu variant (chosen with --variant)" in forced.stdout


# ---- the exact commands of every first-party trainer and variant ----

CORE_DEV = ["-e", f"{ROOT}[dev]"]
CORE_TEST = ["-e", f"{ROOT}[test]"]
TORCH = [*PIP, "torch==2.13.0"]


def plugin_dir(name: str) -> str:
    return f"{ROOT}/plugins/trainers/{name}"


EXPECTED: dict[tuple[str, str], list[list[str]]] = {
    ("verl", "cpu"): [
        TORCH,
        [*PIP, *CORE_DEV, "transformers==5.10.4", "ray==2.60.0", "hydra-core==1.3.2", "omegaconf==2.3.1",
         "tensordict==0.10.0", "datasets==5.2.0", "pyarrow==26.0.1", "pillow==13.0.0", "codetiming==1.4.0",
         "cachetools==8.0.1", "torchdata==0.11.0", "peft==0.20.0", "accelerate==1.15.0", "einops==0.8.2",
         "pyzmq==27.3.0", "msgspec==0.22.0", "psutil==7.2.2"],
        [*PIP, "--no-deps", "verl==0.9.1", "transferqueue==0.1.11"],
        [*PIP, "--no-deps", "-e", plugin_dir("verl")],
    ],
    ("verl", "gpu"): [
        [*PIP, "verl[vllm]==0.9.1"],
        [*PIP, "--no-build-isolation", "flash-attn==2.8.3"],
        [*PIP, *CORE_TEST, "-e", f"{plugin_dir('verl')}[test]"],
    ],
    ("openrlhf", "cpu"): [
        TORCH,
        [*PIP, *CORE_DEV, "transformers==5.15.0", "ray==2.55.0", "aiohttp==3.14.5", "sympy==1.14.0",
         "pylatexenc==2.11", "datasets==5.2.0", "tqdm==4.70.1"],
        [*PIP, "--no-deps", "openrlhf==0.11.2"],  # --compile-bytecode is uv's; pip always compiles
        [*PIP, "--no-deps", "-e", plugin_dir("openrlhf")],
    ],
    ("openrlhf", "gpu"): [
        [*PIP, "openrlhf[vllm]==0.11.2"],
        [*PIP, *CORE_TEST, "-e", f"{plugin_dir('openrlhf')}[test]"],
    ],
    ("areal", "cpu"): [
        TORCH,
        [*PIP, "-e", str(ROOT), "transformers==5.3.0", "tokenizers==0.22.2", "jinja2==3.1.6", "aiofiles==25.1.0",
         "aiohttp==3.14.5", "colorlog==6.12.0", "einops==0.8.2", "flask==3.1.3", "hydra-core==1.4.0.dev1",
         "omegaconf==2.4.0.dev2", "lark==1.3.1", "numba==0.68.1", "openai==3.54.0", "pillow==13.0.0", "ray==2.60.0",
         "tenacity==9.2.1", "torchdata==0.11.0", "pytest==9.2.0", "pytest-timeout==2.4.0", "psutil==7.2.2",
         "mypy==2.4.1", "types-PyYAML==6.0.12.20261113"],
        [*PIP, "--no-deps", "areal==1.0.4", "-e", plugin_dir("areal")],
    ],
    ("areal", "gpu"): [
        [*PIP, "torch==2.9.1"],
        [*PIP, "--no-build-isolation", "flash-attn==2.8.3"],
        [*PIP, "torch==2.9.1", "areal[cuda]==1.0.4"],
        [*PIP, *CORE_TEST, "-e", f"{plugin_dir('areal')}[test]"],
    ],
    ("swift", "cpu"): [
        TORCH,
        [*PIP, "-c", f"{plugin_dir('swift')}/agenthub_trainer_swift/install-constraints.txt", *CORE_DEV,
         "ms-swift==4.6.0", "transformers==5.19.0", "trl==0.29.1", "peft==0.20.0", "datasets==4.8.4",
         "accelerate==1.15.0", "msgspec==0.22.0", "-e", f"{plugin_dir('swift')}[test]"],
    ],
    ("swift", "gpu"): [
        [*PIP, "vllm==0.23.0"],
        [*PIP, *CORE_TEST, "ms-swift==4.6.0", "transformers==5.19.0", "trl==0.29.1", "peft==0.20.0",
         "datasets==4.8.4", "accelerate==1.15.0", "msgspec==0.22.0", "-e", f"{plugin_dir('swift')}[test]"],
    ],
    ("trl", "cpu"): [TORCH, [*PIP, *CORE_DEV, "-e", f"{plugin_dir('trl')}[test]"]],
    ("trl", "gpu"): [TORCH, [*PIP, *CORE_TEST, "-e", f"{plugin_dir('trl')}[test]"]],
}  # fmt: skip


@pytest.mark.parametrize(("name", "variant"), sorted(EXPECTED))
def test_dry_run_prints_each_step_of_the_trainers_recipe(name: str, variant: str) -> None:
    done = agenthub("install", "--dry-run", f"trainer-{name}[test]", "--variant", variant, "--installer", "pip")
    assert done.returncode == 0, done.stderr
    assert commands(done.stdout) == EXPECTED[name, variant]
    assert f"trainer-{name}[test]: {variant} variant (chosen with --variant)" in done.stdout
    assert "installed;" not in done.stdout  # nothing ran


def test_without_the_test_extra_the_test_tools_are_left_out() -> None:
    done = agenthub("install", "--dry-run", "verl", "--variant", "cpu", "--installer", "pip")
    assert done.returncode == 0, done.stderr
    second = commands(done.stdout)[1]
    assert "-e" not in second and second[4] == "transformers==5.10.4"


def test_uv_runs_every_step_but_torch_and_compiles_where_the_recipe_says() -> None:
    target = resolve("trainer-openrlhf[test]")
    loaded = install_recipe.from_project(ROOT / "plugins" / "trainers" / "openrlhf")
    assert loaded is not None
    uv = Installer("/opt/uv")
    steps = loaded.variant("cpu").steps
    argv = [step_command(target, loaded, step, uv, editable=False, extra=[]) for step in steps]
    assert argv[0] == TORCH  # the CPU build of torch is found by pip only
    assert argv[2] == [
        "/opt/uv",
        "pip",
        "install",
        "--python",
        PY,
        "--no-deps",
        "--compile-bytecode",
        "openrlhf==0.11.2",
    ]
    assert argv[3][:5] == ["/opt/uv", "pip", "install", "--python", PY]


# ---- a plugin that is not in this checkout: a path, a wheel, the package index ----


@pytest.fixture(scope="module")
def fake_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real wheel of a tiny trainer plugin whose recipe (and its constraints file) is package data."""
    project = write_plugin(tmp_path_factory.mktemp("fake"), SMALL, extra_data={"pins.txt": "agenthub-x==1\n"})
    dist = project / "dist"
    subprocess.run(
        [PY, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(project)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = dist.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def child_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A virtualenv whose site-packages also load this environment's; installs land in its own."""
    venv = tmp_path_factory.mktemp("child") / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    child_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # addsitedir also runs the parent's .pth files, which is how its editable installs are found.
    Path(child_site, "parent_env.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
    )
    yield python


def test_a_wheel_is_installed_by_the_recipe_inside_it(fake_wheel: Path) -> None:
    done = agenthub("install", "--dry-run", str(fake_wheel), "--variant", "cpu", "--installer", "pip")
    assert done.returncode == 0, done.stderr
    first, second = commands(done.stdout)
    assert first == TORCH
    assert second[:5] == [*PIP, "-c"] and second[5].endswith("agenthub_trainer_fake/pins.txt")
    assert second[6:] == ["agenthub-no-such-package-for-tests==0.0.1", str(fake_wheel)]
    assert "!agenthub_trainer_fake/install.toml" in done.stdout


def test_a_published_plugin_is_installed_without_deps_then_by_the_recipe_it_carries(
    fake_wheel: Path, child_python: Path
) -> None:
    # before it is installed, a dry run can only say that the recipe is read after the first step
    before = agenthub("install", "--dry-run", "trainer-fake[test]", "--installer", "pip", python=str(child_python))
    assert before.returncode == 0, before.stderr
    child = [str(child_python), "-m", "pip", "install"]
    assert commands(before.stdout) == [[*child, "--no-deps", "agenthub-trainer-fake"]]
    assert "agenthub-trainer-fake is not installed yet" in before.stdout
    # installed (the first step, for real): its recipe is read from the installed package
    subprocess.run([*child, "--no-deps", "-q", str(fake_wheel)], check=True, timeout=300)
    after = agenthub(
        "install", "--dry-run", "trainer-fake[test]", "--variant", "gpu", "--installer", "pip", python=str(child_python)
    )
    assert after.returncode == 0, after.stderr
    assert commands(after.stdout) == [
        [*child, "--no-deps", "agenthub-trainer-fake"],
        [*child, "--no-deps", "agenthub-no-such-package-for-tests==0.0.1", "agenthub-trainer-fake"],
    ]
    assert "site-packages/agenthub_trainer_fake/install.toml" in after.stdout


# ---- failures ----


@pytest.mark.parametrize("variant", ["cpu", "gpu"])
def test_a_failed_step_says_which_for_which_variant_and_what_to_do(tmp_path: Path, variant: str) -> None:
    project = write_plugin(tmp_path / "fake", SMALL.replace("torch==2.13.0", "agenthub-none-either==0.0.1"))
    (project / "agenthub_trainer_fake" / "pins.txt").write_text("")
    done = agenthub("install", str(project), "--variant", variant, "--installer", "pip", "--pip-args=--no-index -q")
    assert done.returncode != 0
    assert "Check the name" not in done.stderr
    assert f"{project}'s {variant} recipe failed (exit 1)" in done.stderr
    assert f"See {project}/README.md." in done.stderr
    if variant == "gpu":
        assert "step 1 of 1" in done.stderr and "on a machine without CUDA use --variant cpu" in done.stderr
    else:
        assert "step 1 of 2" in done.stderr and "(torch first)" in done.stderr
        assert "install into a fresh virtualenv" in done.stderr


def test_a_failed_plain_install_of_a_resolved_path_does_not_blame_the_name(tmp_path: Path) -> None:
    project = tmp_path / "broken"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\ndependencies = ["agenthub-none==9"]\n'
    )
    done = agenthub("install", str(project), "--pip-args=--no-index --no-build-isolation -q")
    assert done.returncode != 0
    assert "Check the name" not in done.stderr and "its output above says why" in done.stderr.lower()
