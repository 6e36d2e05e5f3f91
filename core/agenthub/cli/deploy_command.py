"""``agenthub deploy k8s env=NAME [replicas=N token=... namespace=... image=... max_sessions=... out=DIR]``.

The env's plugin must be installed here: its name, version and service defaults (max_sessions) come from it.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from agenthub._version import __version__
from agenthub.cli.overrides import add_overrides
from agenthub.config import build_config
from agenthub.plugins import get_plugin_host
from agenthub.specs import CommandSpec


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", choices=["k8s"], help="k8s: Kubernetes manifests and a KubeRay RayJob")
    add_overrides(parser, "env=NAME replicas=2 namespace=agents image=REGISTRY/IMAGE:TAG max_sessions=8 out=DIR")


def run(args: argparse.Namespace) -> int:
    # imported here, not for `agenthub --help`
    from agenthub.deploy.k8s import K8sConfig, manifests, memory_mib, pod_sessions, validate, write

    config = build_config(K8sConfig, args.overrides, config_file=args.config)
    spec = get_plugin_host().env(config.env)  # an unknown name says which are installed, and the closest
    documents = manifests(spec, config)
    # Checked before anything is written, where the validator is installed (agenthub[k8s]).
    checked = importlib.util.find_spec("kubernetes_validate") is not None
    if checked:
        for docs in documents.values():
            for document in docs:
                validate(document)
    out = Path(config.out or Path("k8s") / spec.name)
    paths = write(documents, out)
    request, limit, fp = memory_mib(spec, config, pod_sessions(spec, config))
    print(f"wrote {', '.join(str(p) for p in paths)}")
    print(
        f"memory per pod: request {request}Mi, limit {limit}Mi ({fp.base_mib:g} MiB + {fp.per_session_mib:g} MiB a "
        f"session, from {fp.source})"
    )
    if not checked:
        print(
            "not validated: pip install 'agenthub[k8s]' to check them against the Kubernetes schemas", file=sys.stderr
        )
    print(f"{out / 'secret.yaml'} holds the token: it is readable by you only (0600); keep it out of version control")
    print(
        f"next: kubectl create namespace {config.namespace} (once); kubectl apply -f {out / 'secret.yaml'} "
        f"-f {out / 'env.yaml'}; then kubectl apply -f {out / 'rayjob-eval.yaml'} (needs KubeRay 1.5+)"
    )
    return 0


COMMANDS = (
    CommandSpec(
        "deploy",
        "Write Kubernetes manifests for an env service (Deployment, Service, autoscaler, ...) and a RayJob.",
        configure,
        run,
        __version__,
    ),
)
