"""Kubernetes manifests for an env service, and a KubeRay RayJob that evaluates through it.

``agenthub deploy k8s env=NAME`` writes, for one env: a Secret (the bearer token; the file is mode 0600),
a Deployment (probes on /healthz, memory from the env's measured footprint, a graceful stop that closes
sessions, confined as :mod:`agenthub.deploy.hardening` says), a Service, a NetworkPolicy, a
HorizontalPodAutoscaler on sessions in use, a PodDisruptionBudget, and a RayJob that runs
``agenthub eval ... url=`` against the Service (the token from the Secret, as $AGENTHUB_TOKEN).
Sessions are sticky to the pod that made them: each pod advertises its own address
(``AGENTHUB_ADVERTISE_URL`` from its pod IP), which EnvClient follows (see ``agenthub.service.routing``).
docs/kubernetes.md is the guide.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from agenthub.deploy.hardening import (
    checkov_skips,
    container_security_context,
    egress_rules,
    network_policy,
    pod_security_context,
    scratch_env,
    scratch_volumes,
)
from agenthub.errors import ConfigError
from agenthub.specs import FOOTPRINT_SLACK_MIB, EnvSpec, Footprint

SESSIONS_METRIC = "agenthub_sessions_active"
"""The gauge of sessions held that each server exports on /metrics (agenthub.service.prometheus_metrics)."""


SLACK_MIB = FOOTPRINT_SLACK_MIB
"""Added to every request: the allocator, imported plugins and the HTTP stack beyond the measured RSS."""
LIMIT_HEADROOM = 1.5
"""Limit over request: room for peaks (a JVM's GC, a large observation) before the kernel kills the pod."""


class K8sConfig(BaseModel):
    """``agenthub deploy k8s`` settings (key=value)."""

    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="the env to serve (a registered name)")
    replicas: int = Field(default=2, ge=1, description="pods to start with; the autoscaler's minimum")
    max_replicas: int | None = Field(default=None, ge=1, description="the autoscaler's maximum; default 4 x replicas")
    namespace: str = Field(
        default="agenthub",
        pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
        description="its own, not 'default' (kubectl create namespace agenthub)",
    )
    image: str | None = Field(
        default=None, description="an image with agenthub and the env plugin; default agenthub-env-NAME:VERSION"
    )
    token: str | None = Field(default=None, description="the bearer token; default: a new random one")
    max_sessions: int | None = Field(default=None, ge=1, description="per pod; default: the env's, else 256")
    port: int = Field(default=8000, ge=1, le=65535)
    cpu: str | None = Field(
        default=None, pattern=r"^\d+(\.\d+)?m?$", description="CPU request per pod (no CPU limit); default: the env's"
    )
    memory_per_session_mib: float | None = Field(default=None, gt=0, description="override the measured figure")
    grace_s: int = Field(default=60, ge=15, description="seconds a stopping pod has to close its sessions")
    agent: str = Field(default="oracle", description="the RayJob's `agenthub eval agent=`")
    split: str | None = None
    n: int | None = Field(default=None, ge=1)
    k: int = Field(default=1, ge=1)
    concurrency: int = Field(default=32, ge=1)
    ray_image: str | None = Field(default=None, description="the RayJob's image (ray + agenthub); default: image")
    ray_version: str = Field(default="2.40.0", description="the Ray version in ray_image")
    out: str | None = Field(default=None, description="directory to write to; default k8s/NAME")
    sites: dict[str, str] = Field(
        default_factory=dict,
        description="the env's outside sites by name (e.g. sites.shopping=http://10.0.5.7:7770), given as "
        "env_kwargs.sites and let through the NetworkPolicy",
    )
    egress: list[str] = Field(
        default_factory=list,
        description="more addresses the pods may reach, as CIDR or CIDR:PORT (the addresses of sites named by host "
        "name); default: none",
    )


def dns_name(text: str) -> str:
    """A DNS-1123 label (lowercase letters, digits, '-'; at most 63) for a Kubernetes object's name."""
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].rstrip("-")
    if not name:
        raise ConfigError(f"{text!r} gives no valid Kubernetes name; use letters, digits and '-'")
    return name


def footprint(spec: EnvSpec, per_session_mib: float | None) -> Footprint:
    """The env's declared footprint (``EnvSpec.footprint``), with the user's figure for a session if given."""
    return spec.footprint.with_per_session_mib(per_session_mib, "memory_per_session_mib=")


def cpu_request(spec: EnvSpec, config: K8sConfig) -> str:
    """The pod's CPU request: ``cpu=``, else the env's footprint as a Kubernetes quantity ("1", "500m")."""
    if config.cpu is not None:
        return config.cpu
    cpus = spec.footprint.cpus
    return str(int(cpus)) if cpus == int(cpus) else f"{math.ceil(cpus * 1000)}m"


def memory_mib(spec: EnvSpec, config: K8sConfig, max_sessions: int) -> tuple[int, int, Footprint]:
    """(request, limit) in MiB for one pod holding ``max_sessions`` sessions."""
    fp = footprint(spec, config.memory_per_session_mib)
    request = math.ceil(fp.base_mib + fp.per_session_mib * max_sessions + SLACK_MIB)
    return request, math.ceil(request * LIMIT_HEADROOM), fp


def pod_sessions(spec: EnvSpec, config: K8sConfig) -> int:
    """Sessions one pod holds: ``max_sessions=``, else the env's service default, else the server's (256)."""
    return int(config.max_sessions or spec.service_defaults.get("max_sessions", 256))


def manifests(spec: EnvSpec, config: K8sConfig) -> dict[str, list[dict[str, Any]]]:
    """The documents, by file name: ``secret.yaml`` (the token), ``env.yaml`` (the service) and
    ``rayjob-eval.yaml`` (the eval run)."""
    name = dns_name(f"agenthub-env-{spec.name}")
    ns = config.namespace
    max_sessions = pod_sessions(spec, config)
    request_mib, limit_mib, _ = memory_mib(spec, config, max_sessions)
    image = config.image or f"agenthub-env-{dns_name(spec.name)}:{spec.version or 'latest'}"
    labels = {"app.kubernetes.io/name": "agenthub-env", "app.kubernetes.io/instance": name}
    meta = {"name": name, "namespace": ns, "labels": labels}
    secret_name = f"{name}-token"
    token_env = {"name": "AGENTHUB_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret_name, "key": "token"}}}
    probe = {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5, "timeoutSeconds": 2}
    egress = egress_rules(config.sites, config.egress)  # refused before anything is written
    args = ["serve", f"env={spec.name}", "host=0.0.0.0", f"port={config.port}", f"max_sessions={max_sessions}"]
    args += [f"env_kwargs.sites.{site}={url}" for site, url in config.sites.items()]
    volumes, mounts = scratch_volumes()
    container = {
        "name": "env",
        "image": image,
        # A tag can be moved: pull every start, so a pod runs what the registry holds now (and checks access).
        "imagePullPolicy": "Always",
        "command": ["agenthub"],
        # No token here: `agenthub serve` reads $AGENTHUB_TOKEN, so it never appears in the pod spec.
        "args": args,
        "ports": [{"name": "http", "containerPort": config.port, "protocol": "TCP"}],
        "env": [
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            # Sticky sessions: each create answer names this pod, and clients send the session's calls here.
            {"name": "AGENTHUB_ADVERTISE_URL", "value": f"http://$(POD_IP):{config.port}"},
            token_env,
            *scratch_env(),
        ],
        "volumeMounts": mounts,
        # A slow first start (a JVM, a browser) gets 2 minutes before liveness may restart it.
        "startupProbe": {**probe, "failureThreshold": 24},
        "readinessProbe": {**probe, "failureThreshold": 2},
        "livenessProbe": {**probe, "periodSeconds": 10, "failureThreshold": 3},
        # Leave the Service's endpoints before SIGTERM, so no new session is sent to a pod that is stopping.
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
        # No CPU limit: throttling stalls every session of the pod; the request places it.
        "resources": {
            "requests": {"cpu": cpu_request(spec, config), "memory": f"{request_mib}Mi"},
            "limits": {"memory": f"{limit_mib}Mi"},
        },
        "securityContext": container_security_context(),
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {**meta, "annotations": checkov_skips(deployment_skips(image))},
        "spec": {
            "replicas": config.replicas,
            "selector": {"matchLabels": labels},
            # A new pod is ready before an old one stops: capacity never drops during a rollout.
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {
                    "labels": labels,
                    "annotations": {
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": str(config.port),
                        "prometheus.io/path": "/metrics",
                    },
                },
                "spec": {
                    # preStop (5 s), then SIGTERM: `agenthub serve` stops taking requests and closes every session.
                    "terminationGracePeriodSeconds": config.grace_s,
                    # The server never calls the Kubernetes API: no credentials for an escape to find.
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security_context(),
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "type": "ClusterIP",
            "selector": labels,
            "ports": [{"name": "http", "port": config.port, "targetPort": "http", "protocol": "TCP"}],
        },
    }
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta,
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": config.replicas,
            "maxReplicas": max(config.replicas, config.max_replicas or 4 * config.replicas),
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": SESSIONS_METRIC},
                        # Scale out at 3/4 full, before new sessions meet 503s.
                        "target": {"type": "AverageValue", "averageValue": str(max(1, (3 * max_sessions) // 4))},
                    },
                }
            ],
            # A removed pod takes its sessions with it: scale in slowly, one pod at a time.
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": 600,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 300}],
                }
            },
        },
    }
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta,
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}},
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {**meta, "name": secret_name},
        "type": "Opaque",
        "stringData": {"token": config.token or secrets.token_urlsafe(32)},
    }
    policy = network_policy(meta, labels, config.port, egress)
    return {
        "secret.yaml": [secret],
        "env.yaml": [deployment, service, policy, hpa, pdb],
        "rayjob-eval.yaml": [rayjob(spec, config, token_env)],
    }


def _unpinned(image: str) -> dict[str, str]:
    if "@sha256:" in image:
        return {}
    return {"CKV_K8S_43": "the image is named by its tag (the image setting); give it as REPO@sha256:DIGEST to pin it"}


def deployment_skips(image: str) -> dict[str, str]:
    """The checkov checks that do not fit an env server, and why (each is a choice, documented here)."""
    skips = {
        "CKV_K8S_11": "no CPU limit on purpose: throttling stalls every session of the pod; the CPU request places it",
        "CKV_K8S_35": "the token is read from $AGENTHUB_TOKEN (secretKeyRef), as agenthub serve and eval expect; "
        "its value is never in the pod spec",
    }
    return {**skips, **_unpinned(image)}


def rayjob(spec: EnvSpec, config: K8sConfig, token_env: Mapping[str, Any]) -> dict[str, Any]:
    """A KubeRay RayJob that runs ``agenthub eval`` on a one-node Ray cluster against the env's Service."""
    name = dns_name(f"agenthub-env-{spec.name}")
    url = f"http://{name}.{config.namespace}.svc.cluster.local:{config.port}"
    # No token on the command line: `agenthub eval` reads $AGENTHUB_TOKEN, set from the Secret.
    words = ["agenthub", "eval", f"env={spec.name}", f"agent={config.agent}", f"url={url}"]
    words += [f"k={config.k}", f"concurrency={config.concurrency}"]
    words += [f"split={config.split}"] if config.split else []
    words += [f"n={config.n}"] if config.n else []
    image = config.ray_image or config.image or f"agenthub-env-{dns_name(spec.name)}:{spec.version or 'latest'}"
    # Ray's object store wants /dev/shm, which is 64 MiB in a pod: a memory-backed one, inside the 4 GiB.
    volumes, mounts = scratch_volumes({"shm": ("/dev/shm", "1Gi")})
    for volume in volumes:
        if volume["name"] == "shm":
            volume["emptyDir"]["medium"] = "Memory"
    head = {
        "name": "ray-head",
        "image": image,
        "imagePullPolicy": "Always",
        "env": [dict(token_env), *scratch_env()],
        # The dashboard (job submission) listens on loopback only: the submitter is a sidecar in this pod.
        "ports": [{"name": "gcs", "containerPort": 6379}, {"name": "client", "containerPort": 10001}],
        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"memory": "4Gi"}},
        "securityContext": container_security_context(),
        "volumeMounts": mounts,
    }
    pod = {
        "automountServiceAccountToken": False,
        "securityContext": pod_security_context(),
        "restartPolicy": "Never",  # SidecarMode: the job's submitter lives and ends with this pod
        "containers": [head],
        "volumes": volumes,
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {
            "name": dns_name(f"agenthub-eval-{spec.name}"),
            "namespace": config.namespace,
            "labels": {"app.kubernetes.io/name": "agenthub-eval"},
        },
        "spec": {
            "entrypoint": " ".join(words),
            # The submitter runs beside the head and reaches its dashboard on 127.0.0.1 (KubeRay 1.5+).
            "submissionMode": "SidecarMode",
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 600,
            "rayClusterSpec": {
                "rayVersion": config.ray_version,
                "headGroupSpec": {
                    "rayStartParams": {"dashboard-host": "127.0.0.1"},
                    "template": {"metadata": {"annotations": checkov_skips(head_skips(image))}, "spec": pod},
                },
            },
        },
    }


def head_skips(image: str) -> dict[str, str]:
    """The checkov checks that do not fit the RayJob's head pod (.ci/k8s-policy checks it as a Pod), and why."""
    skips = {
        "CKV_K8S_8": "KubeRay adds the head's liveness probe (ray health-check) itself",
        "CKV_K8S_9": "KubeRay adds the head's readiness probe (ray health-check) itself",
        "CKV_K8S_11": "no CPU limit on purpose: throttling stalls the eval's episodes; the CPU request places it",
        "CKV_K8S_35": "the token is read from $AGENTHUB_TOKEN (secretKeyRef), as agenthub eval expects; its value "
        "is never in the pod spec",
        "CKV2_K8S_6": "the eval's agent may call a model API anywhere: add a NetworkPolicy naming your model's "
        "endpoint (the env pods admit only their service port)",
    }
    return {**skips, **_unpinned(image)}


def write(documents: Mapping[str, list[dict[str, Any]]], out: Path) -> list[Path]:
    """Each file of ``documents`` under ``out``; one holding a Secret is readable by its owner only (0600)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, docs in documents.items():
        path = out / file_name
        text = yaml.dump_all(docs, Dumper=_PlainDumper, sort_keys=False)
        mode = 0o600 if any(d.get("kind") == "Secret" for d in docs) else 0o644
        # Created with its mode (never readable by others, even for a moment), and set again if it existed.
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w") as file:
            os.fchmod(file.fileno(), mode)
            file.write(text)
        written.append(path)
    return written


class _PlainDumper(yaml.SafeDumper):
    """Writes shared values in full: no &anchors/*aliases, which many Kubernetes tools reject or mangle."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# -- validation (agenthub[k8s]) ---------------------------------------------------------------------

KUBERNETES_VERSION = "1.37"


def rayjob_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((files("agenthub.deploy") / "schemas" / "rayjob-v1.json").read_text())
    return schema


def validate(document: Mapping[str, Any], *, kubernetes_version: str = KUBERNETES_VERSION) -> None:
    """Raise ConfigError if ``document`` is not valid for its kind: Kubernetes' schemas (offline, from
    kubernetes-validate) for built-in kinds, KubeRay's RayJob CRD schema for a RayJob. Unknown fields fail,
    as under ``kubectl apply --validate=strict``."""
    try:
        import jsonschema
        import kubernetes_validate
    except ImportError as exc:
        raise ConfigError(f"validating manifests needs {exc.name}: pip install 'agenthub[k8s]'") from None
    kind = document.get("kind")
    try:
        if kind == "RayJob":
            jsonschema.validate(dict(document), _strict(rayjob_schema()))
            for at, template in _pod_templates(rayjob_schema(), document):
                pod_template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}}
                try:
                    kubernetes_validate.validate(
                        {**pod_template, "template": template}, kubernetes_version, strict=True
                    )
                except kubernetes_validate.ValidationError as exc:
                    where = "/".join([*at, *(str(p) for p in list(exc.path)[1:])])  # past "template"
                    raise ConfigError(f"{kind} is not valid at {where}: {exc.message}") from None
        else:
            kubernetes_validate.validate(dict(document), kubernetes_version, strict=True)
    except (jsonschema.ValidationError, kubernetes_validate.ValidationError) as exc:
        where = "/".join(str(p) for p in exc.path)
        raise ConfigError(f"{kind} is not valid at {where or 'its top'}: {exc.message}") from None


def _strict(schema: Any) -> Any:
    """The schema with unknown properties refused wherever it lists properties, as a cluster's strict
    field validation does (a pod template's PodSpec, not copied into the schema, is checked apart)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _pod_templates(
    schema: Mapping[str, Any], value: Any, at: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], Any]]:
    """Every value in ``value`` whose schema node is marked as a pod template, with its path."""
    if schema.get("x-agenthub-pod-template"):
        return [(at, value)]
    found: list[tuple[tuple[str, ...], Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            child = schema.get("properties", {}).get(key)
            if child is not None:
                found += _pod_templates(child, item, (*at, str(key)))
    elif isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += _pod_templates(schema["items"], item, (*at, str(index)))
    return found
