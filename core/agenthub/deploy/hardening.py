"""What confines an env's pods on Kubernetes: who they run as, what they may write, and whom they may reach.

Every pod runs as a fixed unprivileged user with no capabilities, the runtime's seccomp profile, a
read-only root filesystem (scratch space on emptyDir volumes) and no service-account token (an escape from
a browser or a shell would otherwise hold the cluster's credentials). A NetworkPolicy lets clients reach
the service port only, and lets the pods reach nothing but the addresses given (an env's outside sites).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from agenthub.errors import ConfigError

RUN_AS = 10001
"""The pods' UID and GID: not root, and above the host's own users (a container escape maps to no one)."""
HOME = "/home/agenthub"
"""HOME, on an emptyDir: caches (XDG_CACHE_HOME: an env's generated games or downloaded index, fontconfig),
a browser's ~/.config and ~/.pki."""
SCRATCH = {"tmp": ("/tmp", "2Gi"), "home": (HOME, "1Gi")}
"""emptyDir volumes (name: mount path, size limit), the same for every env: /tmp holds TMPDIR, a JVM's
java.io.tmpdir, a browser's profiles and, with Chromium's --disable-dev-shm-usage, its shared memory."""


def pod_security_context() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "fsGroup": RUN_AS,  # the emptyDir volumes are writable by the pod's group
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security_context() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def scratch_env() -> list[dict[str, str]]:
    return [
        {"name": "HOME", "value": HOME},
        {"name": "TMPDIR", "value": SCRATCH["tmp"][0]},
        {"name": "XDG_CACHE_HOME", "value": f"{HOME}/.cache"},
        {"name": "XDG_CONFIG_HOME", "value": f"{HOME}/.config"},
    ]


def scratch_volumes(extra: Mapping[str, tuple[str, str]] | None = None) -> tuple[list[Any], list[Any]]:
    """(volumes, volumeMounts) for the scratch directories, and any ``extra`` (name: path, size)."""
    wanted = {**SCRATCH, **(extra or {})}
    volumes = [{"name": name, "emptyDir": {"sizeLimit": size}} for name, (_, size) in wanted.items()]
    mounts = [{"name": name, "mountPath": path} for name, (path, _) in wanted.items()]
    return volumes, mounts


def checkov_skips(reasons: Mapping[str, str]) -> dict[str, str]:
    """Annotations that tell checkov (``checkov.io/skipN: CHECK=reason``) why a check does not apply here."""
    if any("=" in reason for reason in reasons.values()):
        raise ValueError("checkov splits a skip annotation at '=': a reason must not hold one")
    return {f"checkov.io/skip{n}": f"{check}={reason}" for n, (check, reason) in enumerate(reasons.items(), 1)}


DNS_RULE = {
    "to": [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ],
    "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
}
"""The cluster's DNS (CoreDNS keeps kube-dns's label), for sites named by a host name."""


def egress_rules(sites: Mapping[str, str], egress: Sequence[str]) -> list[dict[str, Any]]:
    """Egress allowed to each site given by IP address (its /32 or /128 and port), to each ``CIDR[:PORT]`` in
    ``egress``, and to DNS when a site is named by a host name (whose addresses ``egress`` must then cover)."""
    rules: list[dict[str, Any]] = []
    named = []
    for name, url in sites.items():
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"sites.{name}={url!r} is not an http(s) URL; give e.g. sites.{name}=http://HOST:PORT")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            address = ipaddress.ip_address(parts.hostname)
        except ValueError:
            named.append(name)
            continue
        rules.append(_rule(f"{address}/{address.max_prefixlen}", port))
    for item in egress:
        # CIDR:PORT; an IPv6 CIDR (several colons) takes no port
        cidr, _, given_port = item.rpartition(":") if item.count(":") == 1 else (item, "", "")
        try:
            ipaddress.ip_network(cidr, strict=False)
            rules.append(_rule(cidr, int(given_port) if given_port else None))
        except ValueError:
            raise ConfigError(f"egress entry {item!r} is not CIDR or CIDR:PORT, e.g. 10.0.5.0/24:7770") from None
    if named:
        if not egress:
            raise ConfigError(
                f"sites {', '.join(named)} are named by host name, which a NetworkPolicy cannot allow; give the "
                "addresses they resolve to with egress=[CIDR:PORT,...] (or give the sites by IP address)"
            )
        rules.append(DNS_RULE)
    return rules


def _rule(cidr: str, port: int | None) -> dict[str, Any]:
    rule: dict[str, Any] = {"to": [{"ipBlock": {"cidr": cidr}}]}
    if port is not None:
        rule["ports"] = [{"port": port, "protocol": "TCP"}]
    return rule


def network_policy(
    meta: Mapping[str, Any], labels: Mapping[str, str], port: int, egress: list[dict[str, Any]]
) -> dict[str, Any]:
    """Ingress to the service port only (from any pod: the RayJob, trainers, Prometheus); egress only by
    ``egress`` (none: the pod reaches nothing; sites an env serves itself are loopback)."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": dict(meta),
        "spec": {
            "podSelector": {"matchLabels": dict(labels)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"ports": [{"port": port, "protocol": "TCP"}]}],
            "egress": egress,
        },
    }
