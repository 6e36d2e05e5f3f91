"""``agenthub serve env=NAME [key=value ...]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from agenthub.config import build_config
from agenthub.plugins import get_plugin_host
from agenthub.service.serve import serve
from agenthub.service.settings import ServiceSettings


class ServeConfig(ServiceSettings):
    env: str


def run(args: argparse.Namespace) -> int:
    config = build_config(ServeConfig, args.overrides, config_file=args.config)
    spec = get_plugin_host().env(config.env)
    # Only what the user set, so the env's own service_defaults can fill the rest.
    settings = ServiceSettings.model_validate(config.model_dump(include=config.model_fields_set - {"env"}))
    serve(spec, settings, ready_file=Path(args.ready_file) if args.ready_file else None)
    return 0
