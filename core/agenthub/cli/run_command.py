"""``agenthub run trainer=NAME env=NAME [key=value ...]``: train with an installed trainer plugin.

The command only resolves the settings and hands them to the trainer: it
never imports an RL framework. What the trainer receives is one mapping:

* the YAML file given with ``--config``, then the ``key=value`` overrides;
* with ``--resume RUN_DIR``: the run's stored ``config.yaml``, then the
  overrides, plus ``resume: RUN_DIR`` (the trainer decides which settings may
  change on resume, e.g. more ``steps``). Secrets are stored redacted: they are
  given again (``token`` also from ``$AGENTHUB_TOKEN``), else the resume is refused.

``trainer`` stays in the mapping, so a trainer can check it was meant.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from agenthub._version import __version__
from agenthub.cli.overrides import add_overrides
from agenthub.config import deep_merge, fill_secrets, load_yaml, parse_overrides
from agenthub.errors import ConfigError
from agenthub.plugins import PluginHost, get_plugin_host
from agenthub.specs import CommandSpec, EnvSpec


def configure(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "trainer=NAME env=trail steps=30 model=PATH horizon.kind=stepwise horizon.rounds=[1,2,3]")
    parser.add_argument(
        "--resume",
        default=None,
        metavar="RUN_DIR",
        help="continue a run from its last checkpoint; secrets are not stored, so give token=... again "
        "(or set $AGENTHUB_TOKEN)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the resolved config and plan; train nothing")


def resolve_run_config(overrides: list[str], *, config_file: str | None, resume: str | None) -> dict[str, Any]:
    """The mapping a trainer gets: stored config (on resume) or the file, then the overrides."""
    if resume is not None:
        if config_file is not None:
            raise ConfigError(
                "--resume continues a run with its stored config.yaml; drop --config (key=value overrides still apply)"
            )
        from agenthub.rollout.store import RunStore  # imported here, not for `agenthub --help`

        base = RunStore.existing(resume).config()
    else:
        base = load_yaml(config_file) if config_file is not None else {}
    config = deep_merge(base, parse_overrides(overrides))
    if resume is not None:
        config = fill_secrets(config, run_dir=resume, command="agenthub run")
        config["resume"] = resume
    return config


def run(args: argparse.Namespace) -> int:
    config = resolve_run_config(args.overrides, config_file=args.config, resume=args.resume)
    host = get_plugin_host()
    name = config.get("trainer")
    if not isinstance(name, str) or not name:
        installed = ", ".join(host.trainers.names()) or f"none; {_first_party_trainers()}"
        raise ConfigError(
            f"agenthub run needs trainer=NAME (with e.g. env=trail, the built-in env); installed trainers: {installed}"
        )
    spec = host.trainer(name)
    check_names(config, host)
    return int(spec.make().run(config, dry_run=args.dry_run))


def _first_party_trainers() -> str:
    """Where to get a trainer: the first-party ones as the shipped catalogue lists them (data, not code)."""
    from agenthub.cli.plugin_catalogue import shipped

    names = sorted(name for name, kind in shipped() if kind == "trainer")
    listed = f" of the first-party ones: {', '.join(names)}" if names else ""
    return f"`agenthub install trainer-NAME` installs one{listed}"


def check_names(config: Mapping[str, Any], host: PluginHost) -> None:
    """Refuse an unknown ``env`` or ``agent`` now, in the lookup's own words (did you mean, installed ones,
    ``agenthub install NAME``), rather than through the log of an env server that starts and exits.

    With ``url=`` the env servers are someone else's, and may serve an env not installed here.
    """
    if config.get("url"):
        return
    env = config.get("env")
    if isinstance(env, str) and env:
        spec = host.env(env)
        agent = config.get("agent")
        if isinstance(agent, str) and agent:
            host.agent_for(spec, agent)
        check_kwargs(config, spec, host)


def check_kwargs(config: Mapping[str, Any], spec: EnvSpec, host: PluginHost) -> None:
    """Refuse a misspelt ``env_kwargs.KEY``, ``agent_kwargs.KEY`` or ``opponent_kwargs.KEY`` now. Read from
    the factories' source, never imported: the trainer's env servers and workers import them, not this process."""
    from agenthub.option_checks import check_agent_kwargs, check_env_kwargs

    env_kwargs, agent_kwargs, opponent_kwargs = (
        config.get(k) for k in ("env_kwargs", "agent_kwargs", "opponent_kwargs")
    )
    if isinstance(env_kwargs, Mapping):
        check_env_kwargs(spec, env_kwargs, may_import=False)
    for role, kwargs in (("agent", agent_kwargs), ("opponent", opponent_kwargs)):
        called = config.get(role)
        if isinstance(kwargs, Mapping) and isinstance(called, str) and called:
            check_agent_kwargs(spec, called, kwargs, role=role, may_import=False, host=host)


COMMANDS = (
    CommandSpec(
        "run",
        "Train on an env with an installed trainer plugin (trainer=NAME); saves the run.",
        configure,
        run,
        __version__,
    ),
)
