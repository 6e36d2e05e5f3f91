"""`agenthub deploy k8s`: its manifests checked offline against the Kubernetes 1.37 schemas (kubernetes-validate)
and KubeRay's RayJob CRD schema (jsonschema), for several envs and options; and its errors."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml

from agenthub import get_plugin_host
from agenthub.cli.main import main
from agenthub.deploy.k8s import MEASURED, SESSIONS_METRIC, K8sConfig, manifests, rayjob_schema, validate
from agenthub.errors import ConfigError

pytest.importorskip("kubernetes_validate")
ROOT = Path(__file__).resolve().parents[2]


def deploy(tmp_path: Path, *args: str) -> dict[str, list[dict[str, Any]]]:
    assert main(["deploy", "k8s", *args, f"out={tmp_path}"]) == 0
    return {p.name: list(yaml.safe_load_all(p.read_text())) for p in sorted(tmp_path.glob("*.yaml"))}


def by_kind(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in docs}


@pytest.mark.parametrize(
    "args",
    [
        ["env=guess"],
        ["env=sciworld", "replicas=3", "namespace=agents", "image=registry.example/agenthub-sci:1", "token=s3cret"],
        ["env=textcraft", "max_sessions=64", "max_replicas=10", "n=20", "k=4", "split=test", "cpu=500m"],
        ["env=webarena", "memory_per_session_mib=40", "port=9000", "grace_s=120", "agent=openai"],
    ],
)
def test_every_manifest_validates(tmp_path: Path, args: list[str]) -> None:
    files = deploy(tmp_path, *args)
    assert set(files) == {"env.yaml", "rayjob-eval.yaml"}
    docs = files["env.yaml"] + files["rayjob-eval.yaml"]
    assert [d["kind"] for d in docs] == [
        "Secret",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "RayJob",
    ]
    for doc in docs:
        validate(doc)  # raises on any schema violation or unknown field


def test_deployment_probes_resources_shutdown_and_token(tmp_path: Path) -> None:
    docs = by_kind(deploy(tmp_path, "env=sciworld", "token=s3cret")["env.yaml"])
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    # sciworld: 8 sessions a pod (its service default), 96 MiB each on a 209 MiB server, plus 64 MiB slack.
    assert "max_sessions=8" in container["args"]
    assert container["resources"]["requests"]["memory"] == f"{219 + 31 * 8 + 64}Mi"
    assert container["resources"]["limits"]["memory"] == f"{math.ceil((219 + 31 * 8 + 64) * 1.5)}Mi"
    assert pod["terminationGracePeriodSeconds"] >= 30 and container["lifecycle"]["preStop"]
    env = {e["name"]: e for e in container["env"]}
    assert env["AGENTHUB_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == docs["Secret"]["metadata"]["name"]
    assert env["AGENTHUB_ADVERTISE_URL"]["value"] == "http://$(POD_IP):8000"
    assert docs["Secret"]["stringData"]["token"] == "s3cret"
    assert "s3cret" not in yaml.safe_dump(docs["Deployment"])  # never inline
    metric = docs["HorizontalPodAutoscaler"]["spec"]["metrics"][0]["pods"]
    assert metric["metric"]["name"] == SESSIONS_METRIC == "agenthub_sessions_active"
    assert metric["target"]["averageValue"] == "6"  # 3/4 of 8


def test_rayjob_evaluates_through_the_service(tmp_path: Path) -> None:
    files = deploy(tmp_path, "env=textcraft", "namespace=agents", "n=5")
    service = by_kind(files["env.yaml"])["Service"]
    entrypoint = files["rayjob-eval.yaml"][0]["spec"]["entrypoint"]
    assert f"url=http://{service['metadata']['name']}.agents.svc.cluster.local:8000" in entrypoint
    assert "agenthub eval env=textcraft" in entrypoint and "n=5" in entrypoint


def test_a_generated_token_is_random() -> None:
    spec = get_plugin_host().env("guess")
    tokens = {
        by_kind(manifests(spec, K8sConfig(env="guess"))["env.yaml"])["Secret"]["stringData"]["token"] for _ in "ab"
    }
    assert len(tokens) == 2 and all(len(t) >= 32 for t in tokens)


def test_validation_refuses_what_a_cluster_would(tmp_path: Path) -> None:
    docs = by_kind(manifests(get_plugin_host().env("guess"), K8sConfig(env="guess"))["env.yaml"])
    broken = json.loads(json.dumps(docs["Deployment"]))
    broken["spec"]["replicas"] = "two"
    with pytest.raises(ConfigError, match="Deployment is not valid at spec/replicas"):
        validate(broken)
    job = manifests(get_plugin_host().env("guess"), K8sConfig(env="guess"))["rayjob-eval.yaml"][0]
    unknown = {**job, "spec": {**job["spec"], "entrypont": "typo"}}
    with pytest.raises(ConfigError, match="RayJob is not valid"):
        validate(unknown)
    bad_pod = json.loads(json.dumps(job))
    bad_pod["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["image"] = 3
    with pytest.raises(ConfigError, match="RayJob is not valid"):
        validate(bad_pod)


def rich_rayjob() -> dict[str, Any]:
    """A RayJob using fields agenthub does not write (workers, autoscaler, submitter pod), as a user might."""
    job = json.loads(
        json.dumps(manifests(get_plugin_host().env("guess"), K8sConfig(env="guess"))["rayjob-eval.yaml"][0])
    )
    container = {"name": "ray-worker", "image": "rayproject/ray:2.40.0"}
    job["spec"]["rayClusterSpec"]["workerGroupSpecs"] = [
        {
            "groupName": "cpu",
            "replicas": 2,
            "minReplicas": 1,
            "maxReplicas": 4,
            "rayStartParams": {},
            "scaleStrategy": {"workersToDelete": []},
            "template": {"metadata": {"labels": {"pool": "cpu"}}, "spec": {"containers": [container]}},
        }
    ]
    job["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"] = True
    job["spec"]["rayClusterSpec"]["autoscalerOptions"] = {"upscalingMode": "Conservative", "idleTimeoutSeconds": 60}
    job["spec"]["submissionMode"] = "K8sJobMode"
    job["spec"]["submitterPodTemplate"] = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    return dict(job)


def test_kuberays_rayjob_schema_accepts_its_fields_and_refuses_what_the_crd_refuses() -> None:
    validate(rich_rayjob())

    def refused(change: Callable[[dict[str, Any]], None], where: str) -> None:
        job = rich_rayjob()
        change(job)
        with pytest.raises(ConfigError, match=f"RayJob is not valid at {where}"):
            validate(job)

    spec = "spec"
    cluster = "spec/rayClusterSpec"
    # a wrong type, a value outside an enum
    refused(lambda j: j[spec].update(shutdownAfterJobFinishes="yes"), "spec/shutdownAfterJobFinishes")
    refused(
        lambda j: j[spec]["rayClusterSpec"]["workerGroupSpecs"][0].update(replicas="2"),
        f"{cluster}/workerGroupSpecs/0/replicas",
    )
    refused(
        lambda j: j[spec]["rayClusterSpec"]["autoscalerOptions"].update(upscalingMode="Fast"),
        f"{cluster}/autoscalerOptions/upscalingMode",
    )
    # a required field missing, at each level the CRD requires one
    refused(lambda j: j[spec].pop("entrypoint"), "spec: 'entrypoint' is a required property")
    refused(
        lambda j: j[spec]["rayClusterSpec"].pop("headGroupSpec"), f"{cluster}: 'headGroupSpec' is a required property"
    )
    refused(
        lambda j: j[spec]["rayClusterSpec"]["headGroupSpec"].pop("rayStartParams"),
        f"{cluster}/headGroupSpec: 'rayStartParams'",
    )
    refused(
        lambda j: j[spec]["rayClusterSpec"]["workerGroupSpecs"][0].pop("groupName"),
        f"{cluster}/workerGroupSpecs/0: 'groupName'",
    )
    # a field the CRD does not have, deep down
    refused(
        lambda j: j[spec]["rayClusterSpec"]["headGroupSpec"].update(enableIngres=True),
        f"{cluster}/headGroupSpec: Additional",
    )
    # every pod template is checked against Kubernetes' own PodTemplateSpec
    refused(
        lambda j: j[spec]["submitterPodTemplate"]["spec"].update(restartPolicy=1),
        "spec/submitterPodTemplate/spec/restartPolicy",
    )
    refused(
        lambda j: j[spec]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"].pop("containers"),
        f"{cluster}/workerGroupSpecs/0/template/spec: 'containers' is a required property",
    )
    refused(
        lambda j: j[spec]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0].update(image=3),
        f"{cluster}/workerGroupSpecs/0/template/spec/containers/0/image",
    )


def test_the_rayjob_schema_names_its_source_and_licence() -> None:
    schema = rayjob_schema()
    notice = (files("agenthub.deploy") / "schemas" / "NOTICE").read_text()
    commit = "007412988d067642eeb67f8b80c373fc9ab401dd"
    assert commit in schema["$comment"] and commit in notice and "Apache License, Version 2.0" in notice
    # the published v1 schema, beyond what agenthub writes: its status, and every spec field of the CRD
    assert set(schema["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert len(schema["properties"]["spec"]["properties"]) == 15


def test_unknown_env_and_bad_options_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deploy", "k8s", "env=sciwrld", f"out={tmp_path}"]) == 2
    assert "did you mean 'sciworld'?" in capsys.readouterr().err
    assert main(["deploy", "k8s", "env=guess", "namespace=Bad_NS", f"out={tmp_path}"]) == 2
    assert "namespace" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written on an error


def test_measured_footprints_match_the_benchmark_results() -> None:
    results = json.loads((ROOT / "benchmarks/results/env_plugins.json").read_text())["envs"]
    packed = json.loads((ROOT / "benchmarks/results/sciworld_packing.json").read_text())["modes"]["packed"]
    for name, fp in MEASURED.items():
        memory = results[name]["memory"]
        assert fp.base_mib >= memory["rss_0_mib"] and fp.base_mib - memory["rss_0_mib"] < 1.5, name
        per = memory["per_session_kib"] / 1024
        if name == "sciworld":  # a session's share of a packed JVM, not the room left in the idle server's
            assert per < packed["idle"]["per_session_rss_mib"], "packing no longer shares the idle JVM"
            per = packed["idle"]["per_session_rss_mib"]
        assert fp.per_session_mib >= per and fp.per_session_mib - per < 0.5, name
