"""`agenthub deploy k8s`: its manifests checked offline against the Kubernetes 1.37 schemas (kubernetes-validate)
and KubeRay's RayJob CRD schema (jsonschema), for several envs and options; their confinement (security
contexts, NetworkPolicy, the token only in a 0600 Secret file); and its errors. .ci/k8s-policy runs checkov
on them too."""

from __future__ import annotations

import json
import math
import stat
import sys
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml

from agenthub import get_plugin_host, measured_footprint, measured_footprints
from agenthub.cli.main import main
from agenthub.deploy.hardening import RUN_AS
from agenthub.deploy.k8s import (
    SESSIONS_METRIC,
    SLACK_MIB,
    K8sConfig,
    cpu_request,
    manifests,
    memory_mib,
    rayjob_schema,
    validate,
)
from agenthub.errors import ConfigError, PluginError
from agenthub.specs import DEFAULT_FOOTPRINT, EnvSpec, Footprint

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
        ["env=webarena", "sites.shopping=http://10.0.5.7:7770", "egress=[10.0.6.0/24:443]", "token=s3cret"],
    ],
)
def test_every_manifest_validates(tmp_path: Path, args: list[str]) -> None:
    files = deploy(tmp_path, *args)
    assert set(files) == {"secret.yaml", "env.yaml", "rayjob-eval.yaml"}
    docs = files["secret.yaml"] + files["env.yaml"] + files["rayjob-eval.yaml"]
    assert [d["kind"] for d in docs] == [
        "Secret",
        "Deployment",
        "Service",
        "NetworkPolicy",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "RayJob",
    ]
    for doc in docs:
        validate(doc)  # raises on any schema violation or unknown field
    # the token is in the Secret's file only, and that file is its owner's alone
    assert stat.S_IMODE((tmp_path / "secret.yaml").stat().st_mode) == 0o600
    for name in ("env.yaml", "rayjob-eval.yaml"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644
        assert "s3cret" not in (tmp_path / name).read_text()


def pod_specs(files: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    deployment = by_kind(files["env.yaml"])["Deployment"]
    job = files["rayjob-eval.yaml"][0]
    return [deployment["spec"]["template"]["spec"], job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]]


@pytest.mark.parametrize("env", ["guess", "sciworld", "webarena"])
def test_every_pod_is_confined(tmp_path: Path, env: str) -> None:
    for pod in pod_specs(deploy(tmp_path, f"env={env}")):
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == pod["securityContext"]["runAsGroup"] == RUN_AS
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        mounted = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
            assert context["capabilities"] == {"drop": ["ALL"]} and context["runAsNonRoot"] is True
            paths = {m["mountPath"] for m in container["volumeMounts"] if m["name"] in mounted}
            env_vars = {e["name"]: e.get("value") for e in container["env"]}
            # every place the env, the JVM or Chromium writes is a scratch volume
            assert {"/tmp", env_vars["HOME"], env_vars["TMPDIR"]} <= paths
            assert env_vars["XDG_CACHE_HOME"].startswith(env_vars["HOME"])


def test_the_network_policy_admits_the_service_port_and_lets_out_only_the_sites(tmp_path: Path) -> None:
    policy = by_kind(deploy(tmp_path, "env=guess", "port=9000")["env.yaml"])["NetworkPolicy"]
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["ingress"] == [{"ports": [{"port": 9000, "protocol": "TCP"}]}]
    assert policy["spec"]["egress"] == []  # nothing: the pod reaches no one
    files = deploy(tmp_path, "env=webarena", "sites.shopping=http://10.0.5.7:7770", "sites.gitlab=https://[fd00::5]")
    egress = by_kind(files["env.yaml"])["NetworkPolicy"]["spec"]["egress"]
    assert egress == [
        {"to": [{"ipBlock": {"cidr": "10.0.5.7/32"}}], "ports": [{"port": 7770, "protocol": "TCP"}]},
        {"to": [{"ipBlock": {"cidr": "fd00::5/128"}}], "ports": [{"port": 443, "protocol": "TCP"}]},
    ]
    args = by_kind(files["env.yaml"])["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "env_kwargs.sites.shopping=http://10.0.5.7:7770" in args
    # a site named by host name: its addresses come from egress=, and DNS is let through
    named = deploy(tmp_path, "env=webarena", "sites.shopping=http://shop.internal:7770", "egress=[10.0.5.0/24:7770]")
    rules = by_kind(named["env.yaml"])["NetworkPolicy"]["spec"]["egress"]
    assert rules[0] == {"to": [{"ipBlock": {"cidr": "10.0.5.0/24"}}], "ports": [{"port": 7770, "protocol": "TCP"}]}
    assert {"port": 53, "protocol": "UDP"} in rules[1]["ports"]


def test_sites_a_network_policy_cannot_express_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deploy", "k8s", "env=webarena", "sites.shopping=http://shop.internal", f"out={tmp_path}"]) == 2
    assert "egress=[CIDR:PORT" in capsys.readouterr().err
    assert main(["deploy", "k8s", "env=webarena", "egress=[shop.internal]", f"out={tmp_path}"]) == 2
    assert "not CIDR or CIDR:PORT" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_the_secret_file_is_made_private_even_over_an_older_one(tmp_path: Path) -> None:
    (tmp_path / "secret.yaml").write_text("old")
    (tmp_path / "secret.yaml").chmod(0o644)
    deploy(tmp_path, "env=guess")
    assert stat.S_IMODE((tmp_path / "secret.yaml").stat().st_mode) == 0o600


def test_deployment_probes_resources_shutdown_and_token(tmp_path: Path) -> None:
    files = deploy(tmp_path, "env=sciworld", "token=s3cret")
    docs = by_kind(files["secret.yaml"] + files["env.yaml"])
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    # sciworld: 8 sessions a pod (its service default), each its share of a packed JVM, on the idle server's
    # memory, plus 64 MiB slack (the figures its spec declares from the benchmarks).
    fp = get_plugin_host().env("sciworld").footprint
    request = math.ceil(fp.base_mib + fp.per_session_mib * 8 + 64)
    assert "max_sessions=8" in container["args"]
    assert container["resources"]["requests"]["memory"] == f"{request}Mi"
    assert container["resources"]["limits"]["memory"] == f"{math.ceil(request * 1.5)}Mi"
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
    job = files["rayjob-eval.yaml"][0]["spec"]
    entrypoint = job["entrypoint"]
    assert f"url=http://{service['metadata']['name']}.agents.svc.cluster.local:8000" in entrypoint
    assert "agenthub eval env=textcraft" in entrypoint and "n=5" in entrypoint
    # the token reaches `agenthub eval` as $AGENTHUB_TOKEN from the Secret, never on its command line
    assert "token" not in entrypoint.lower()
    head = job["rayClusterSpec"]["headGroupSpec"]
    env = {e["name"]: e for e in head["template"]["spec"]["containers"][0]["env"]}
    secret = by_kind(files["secret.yaml"])["Secret"]["metadata"]["name"]
    assert env["AGENTHUB_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": secret, "key": "token"}
    # the dashboard (which runs any job submitted to it) only on loopback; the submitter beside it
    assert head["rayStartParams"]["dashboard-host"] == "127.0.0.1"
    assert job["submissionMode"] == "SidecarMode"
    assert head["template"]["spec"]["restartPolicy"] == "Never"


def test_a_generated_token_is_random() -> None:
    spec = get_plugin_host().env("guess")
    tokens = {
        by_kind(manifests(spec, K8sConfig(env="guess"))["secret.yaml"])["Secret"]["stringData"]["token"] for _ in "ab"
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


MEASURED_BY_ENV_PLUGINS = ("guess", "trail", "maze", "wordle", "textcraft", "babyai", "textworld", "sciworld")
"""The envs benchmarks/env_plugins.py measured (its result file's envs): each declares what it measured."""


def test_each_measured_env_declares_its_benchmark_figures_in_its_spec() -> None:
    results = json.loads((ROOT / "benchmarks/results/env_plugins.json").read_text())["envs"]
    packed = json.loads((ROOT / "benchmarks/results/sciworld_packing.json").read_text())["modes"]["packed"]
    assert set(results) == set(MEASURED_BY_ENV_PLUGINS), "a newly measured env: declare its footprint in its EnvSpec"
    for name in MEASURED_BY_ENV_PLUGINS:
        fp = get_plugin_host().env(name).footprint
        assert fp is not DEFAULT_FOOTPRINT and "env_plugins.json" in fp.source, name
        memory = results[name]["memory"]
        assert fp.base_mib >= memory["rss_0_mib"] and fp.base_mib - memory["rss_0_mib"] < 1.5, name
        per = memory["per_session_kib"] / 1024
        if name == "sciworld":  # a session's share of a packed JVM, not the room left in the idle server's
            assert per < packed["idle"]["per_session_rss_mib"], "packing no longer shares the idle JVM"
            per = packed["idle"]["per_session_rss_mib"]
        assert fp.per_session_mib >= per and fp.per_session_mib - per < 0.5, name
        assert fp.cpus == 1.0, name  # one event loop a server


def test_the_manifests_size_a_pod_from_the_envs_spec(tmp_path: Path) -> None:
    """An env declares its footprint in its EnvSpec; deploy k8s reads nothing else (no table of envs)."""
    spec = EnvSpec(
        name="sized",
        factory="agenthub.builtin.guess:GuessNumberEnv",
        splits={},
        default_max_turns=1,
        service_defaults={"max_sessions": 10},
        footprint=Footprint(100.0, 2.5, cpus=0.25, source="a test"),
    )
    config = K8sConfig(env="sized")
    assert memory_mib(spec, config, 10)[:2] == (189, 284)  # 100 + 2.5 x 10 + 64, then x 1.5 rounded up
    assert cpu_request(spec, config) == "250m" and cpu_request(spec, K8sConfig(env="sized", cpu="2")) == "2"
    container = manifests(spec, config)["env.yaml"][0]["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "250m", "memory": "189Mi"}, "limits": {"memory": "284Mi"}}
    # one that declares none gets the default, and says so
    bare = EnvSpec(name="bare", factory="agenthub.builtin.guess:GuessNumberEnv", splits={}, default_max_turns=1)
    request, _, fp = memory_mib(bare, K8sConfig(env="bare"), 256)
    assert fp is DEFAULT_FOOTPRINT and "declares no footprint" in fp.source
    assert request == math.ceil(256 + 16 * 256 + SLACK_MIB) and cpu_request(bare, K8sConfig(env="bare")) == "1"


@pytest.mark.parametrize("name", ["guess", "sciworld", "webarena", "search"])
def test_ray_reserves_what_the_pod_requests(name: str) -> None:
    """Both read the env's spec: the Ray backend's server and session figures are the manifests' own."""
    from agenthub.rollout.ray.resources import env_resources

    spec = get_plugin_host().env(name)
    ray = env_resources(name)
    request, _, fp = memory_mib(spec, K8sConfig(env=name), 1)
    assert fp == spec.footprint and ray.source == fp.source
    assert (ray.cpus_per_server, ray.memory_mib_per_session) == (fp.cpus, fp.per_session_mib)
    assert request == math.ceil(ray.memory_mib_per_server + ray.memory_mib_per_session)


def test_a_footprint_refuses_figures_that_cannot_size_a_server() -> None:
    with pytest.raises(PluginError, match="per_session_mib > 0"):
        Footprint(50.0, 0.0)
    with pytest.raises(PluginError, match=r"footprint must be an agenthub\.Footprint"):
        EnvSpec(name="x", factory="m:f", splits={}, default_max_turns=1, footprint=(1, 2))  # type: ignore[arg-type]


def test_the_footprint_stays_off_the_wire() -> None:
    """Older clients refuse unknown /v1/info fields (EnvInfo forbids extras): the footprint is not sent."""
    info = get_plugin_host().env("webarena").info().model_dump()
    assert not {"footprint", "base_mib", "per_session_mib", "cpus"} & set(info)


def test_webarenas_footprint_covers_its_measurement() -> None:
    """benchmarks/webarena_env.py measured the PSS of a server's whole tree (server, driver, Chromium, shop) with
    1, 4, 8 and 16 sessions open: the request (footprint + slack) covers each point, the footprint alone from 8."""
    memory = json.loads((ROOT / "benchmarks/results/webarena_env.json").read_text())["memory_per_session"]
    fp = get_plugin_host().env("webarena").footprint
    assert "webarena_env.json" in fp.source and fp.base_mib >= memory["idle_tree_mb"]
    for point in memory["by_open_sessions"]:
        sized = fp.base_mib + fp.per_session_mib * point["open_sessions"]
        assert sized + SLACK_MIB >= point["tree_mb"], point
        if point["open_sessions"] >= 8:
            assert sized >= point["tree_mb"], point
    # the env's own 32 sessions a pod: base + 32 sessions + 64 MiB requested, 1.5 x that the limit
    request, limit, _ = memory_mib(get_plugin_host().env("webarena"), K8sConfig(env="webarena"), 32)
    assert request == math.ceil(fp.base_mib + 32 * fp.per_session_mib + SLACK_MIB) and limit == math.ceil(1.5 * request)
    # the file holds what the benchmark measured and webarena_env.py's own rule sized from it
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from webarena_env import footprint_from_memory  # a benchmarks/ module

    assert footprint_from_memory(memory) == (fp.base_mib, fp.per_session_mib)
    declared = measured_footprints.read_footprints("agenthub_env_webarena")["webarena"]["measured"]
    assert declared["idle_tree_mb"] == memory["idle_tree_mb"]


def test_each_env_plugin_reads_its_footprint_from_the_file_its_benchmark_wrote() -> None:
    """No figure is typed into a plugin's code: the spec's footprint is its footprints.json entry, and that entry
    records what the benchmark measured (the raw figures it rounded up)."""
    for name in (*MEASURED_BY_ENV_PLUGINS, "webarena"):
        spec = get_plugin_host().env(name)
        entry = measured_footprints.read_footprints(measured_footprints.package_of(spec))[name]
        assert (spec.footprint.base_mib, spec.footprint.per_session_mib) == (
            entry["base_mib"],
            entry["per_session_mib"],
        )
        assert entry["measured"], name


def test_a_missing_or_broken_footprints_file_is_a_clear_plugin_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "fp_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match=r"ships no footprints\.json.*package-data"):
        measured_footprint("fp_probe", "x")
    (package / "footprints.json").write_text('{"envs": {"x": {"base_mib": "lots", "per_session_mib": 1}}}')
    with pytest.raises(PluginError, match=r"env 'x' needs numbers for base_mib"):
        measured_footprint("fp_probe", "x")
    with pytest.raises(PluginError, match=r"no figures for env 'y' \(it has: x\).*--write-footprints y"):
        measured_footprint("fp_probe", "y")
    (package / "footprints.json").write_text('{"envs": {"x": {"base_mib": -1, "per_session_mib": 1}}}')
    with pytest.raises(PluginError, match=r"base_mib >= 0"):
        measured_footprint("fp_probe", "x")
    (package / "footprints.json").write_text("[]")
    with pytest.raises(PluginError, match=r"is not a footprints file"):
        measured_footprint("fp_probe", "x")
