"""The built-in sub-commands, registered through the same hook a plugin would use."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from agenthub._version import __version__
from agenthub.hookimpl import hookimpl
from agenthub.specs import CommandSpec


def add_overrides(parser: argparse.ArgumentParser, example: str) -> None:
    parser.add_argument("overrides", nargs="*", metavar="key=value", help=f"settings, e.g. {example}")
    parser.add_argument(
        "--config", default=None, metavar="FILE", help="a YAML file of settings; key=value wins over it"
    )


def _lazy(module: str, attr: str) -> Callable[[argparse.Namespace], int]:
    """Import a command's implementation only when it runs, to keep `agenthub --help` fast."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        return int(getattr(importlib.import_module(module), attr)(args))

    return run


def _configure_serve(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess port=8000 max_sessions=256 ttl=600 token=SECRET mcp=true env_kwargs.high=32")
    parser.epilog = (
        "mcp=true: the same server also answers MCP (streamable HTTP) at /mcp, with the tools list_tasks, "
        "start_episode, act and end_episode; an MCP episode is one of its sessions, under the same max_sessions, "
        "ttl and token (needs agenthub[mcp]). agenthub mcp serves MCP alone, over stdio or HTTP."
    )
    parser.add_argument("--ready-file", default=None, help="write {url, pid} here once listening (used by launchers)")
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a host beyond loopback (e.g. host=0.0.0.0) with no token, on a trusted network",
    )


def _configure_deploy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", choices=["k8s"], help="k8s: Kubernetes manifests and a KubeRay RayJob")
    add_overrides(parser, "env=sciworld replicas=2 namespace=agents image=REGISTRY/IMAGE:TAG max_sessions=8 out=DIR")


def _configure_mcp(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess transport=stdio|http port=8000 max_sessions=256 ttl=600 token=SECRET")
    parser.add_argument("--ready-file", default=None, help="write {url, pid} here once listening (transport=http)")
    parser.add_argument("--insecure", action="store_true", help="allow a host beyond loopback with no token")


def _configure_plugins(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _configure_check(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess env_kwargs.high=32 agent=random, or url=http://127.0.0.1:8000 sessions=8")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _configure_play(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=guess agent=random agent.seed=1 task_id=3 split=test env_kwargs.high=32 url=http://...")


def _configure_eval(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=textcraft agent=openai agent.model=NAME split=test n=100 k=8 concurrency=64")
    parser.add_argument(
        "--resume",
        default=None,
        metavar="RUN_DIR",
        help="finish an interrupted run; secrets are not stored, so give token=... again (or set $AGENTHUB_TOKEN)",
    )


def _configure_run(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "trainer=trl env=trail steps=30 model=PATH horizon.kind=stepwise horizon.rounds=[1,2,3]")
    parser.add_argument(
        "--resume",
        default=None,
        metavar="RUN_DIR",
        help="continue a run from its last checkpoint; secrets are not stored, so give token=... again "
        "(or set $AGENTHUB_TOKEN)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the resolved config and plan; train nothing")


def _configure_init(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=["env", "agent", "trainer"], help="what the plugin registers")
    parser.add_argument("name", help="the plugin's name, e.g. word-game (env=word-game)")
    parser.add_argument("--dir", default=None, help="where to write it (default: ./agenthub-KIND-NAME)")
    parser.add_argument("--force", action="store_true", help="write into a directory that is not empty")


def _configure_install(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "names",
        nargs="+",
        metavar="NAME",
        help="sciworld, env-sciworld or agenthub-env-sciworld (the same plugin: this checkout's, where there is "
        "one and no version is given), trainer-verl[test], ./path or a .whl",
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


def _configure_uninstall(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="env-sciworld, sciworld, agenthub-env-x, ./path")
    parser.add_argument("--dry-run", action="store_true", help="print the pip command only")


def _configure_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=["sft", "parquet"], help="sft: chat JSONL; parquet: raw trajectories")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory, e.g. runs/20250101-120000-abc123")
    parser.add_argument("--only-success", action="store_true", help="only episodes whose outcome is success")
    parser.add_argument("-o", "--output", default=None, metavar="FILE", help="default: RUN_DIR/sft.jsonl")
    parser.add_argument(
        "--system-prompt", default=None, metavar="TEXT", help="default: the env's instructions; '' for none"
    )


def _configure_view(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (runs/<run-id>) or a runs/ root")
    parser.add_argument(
        "overrides", nargs="*", metavar="key=value", help="settings, e.g. port=8765 host=127.0.0.1 tokenizer=PATH"
    )
    parser.add_argument("--ready-file", default=None, help="write {url, pid} here once listening (used by scripts)")
    parser.add_argument("--insecure", action="store_true", help="allow a host beyond loopback with no token")


def _configure_report(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (runs/<run-id>) or a runs/ root")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="settings, e.g. episodes=500 tokenizer=PATH")
    parser.add_argument("-o", "--output", default=None, metavar="FILE", help="default: RUN_DIR/report.html")


@hookimpl
def agenthub_register_commands(register: Callable[[CommandSpec], None]) -> None:
    register(
        CommandSpec(
            "serve",
            "Serve an environment over HTTP (protocol v1) until SIGTERM.",
            _configure_serve,
            _lazy("agenthub.cli.serve_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "mcp",
            "Serve an environment as an MCP server (stdio or streamable HTTP): tools to list tasks and play.",
            _configure_mcp,
            _lazy("agenthub.cli.mcp_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "plugins",
            "List installed plugins, their versions and what each registers.",
            _configure_plugins,
            _lazy("agenthub.cli.plugins_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "check",
            "Run the conformance checks on an environment, through its service.",
            _configure_check,
            _lazy("agenthub.cli.check_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "play",
            "Serve an environment locally and play one episode with an agent (default: the env's oracle).",
            _configure_play,
            _lazy("agenthub.cli.play_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "eval",
            "Score an agent on an env's tasks: Avg@k, Pass@k and unbiased pass@k; saves the run.",
            _configure_eval,
            _lazy("agenthub.cli.eval_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "run",
            "Train on an env with an installed trainer plugin (trainer=trl runs on a CPU); saves the run.",
            _configure_run,
            _lazy("agenthub.cli.run_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "export",
            "Export a run's trajectories: chat JSONL for SFT (--only-success) or Parquet.",
            _configure_export,
            _lazy("agenthub.cli.export_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "view",
            "Browse runs in a local web page: episodes, turn-by-turn replay with tokens, per-task table, curves.",
            _configure_view,
            _lazy("agenthub.cli.view_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "report",
            "Write what `agenthub view` shows as one self-contained HTML file.",
            _configure_report,
            _lazy("agenthub.cli.report_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "deploy",
            "Write Kubernetes manifests for an env service (Deployment, Service, autoscaler, ...) and a RayJob.",
            _configure_deploy,
            _lazy("agenthub.cli.deploy_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "init",
            "Make a new env, agent or trainer plugin package that installs and passes its own tests.",
            _configure_init,
            _lazy("agenthub.cli.init_command", "run"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "install",
            "Install plugins by short name (env-sciworld, trainer-verl) or path, by the recipe a plugin ships.",
            _configure_install,
            _lazy("agenthub.cli.install_command", "run_install"),
            __version__,
        )
    )
    register(
        CommandSpec(
            "uninstall",
            "pip uninstall plugins by short name or path.",
            _configure_uninstall,
            _lazy("agenthub.cli.install_command", "run_uninstall"),
            __version__,
        )
    )
