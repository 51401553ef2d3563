"""The deployment files: Kubernetes overlays render (kubectl kustomize) and validate against the
Kubernetes schemas (kubernetes-validate) and local KEDA schemas; the compose file passes
`docker-compose config`; both describe the same layout (one pool per queue family, Flower).
Skipped only where kubectl / docker-compose are absent (`make test` installs docker-compose)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from config.celery import QUEUES, celery_config
from config.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"
OVERLAYS = ["base", "overlays/production", "overlays/gpu", "overlays/rabbitmq"]
K8S_VERSION = "1.32.0"
CRD_SCHEMAS = {"ScaledObject": "scaledobject.json", "TriggerAuthentication": "triggerauthentication.json"}
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
needs_compose = pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose is not installed")


def render(path: str) -> list[dict[str, Any]]:
    out = subprocess.run(["kubectl", "kustomize", str(K8S / path)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def worker_queues(deployment: dict[str, Any]) -> str:
    cmd = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    return str(cmd[cmd.index("--queues") + 1])


@needs_kubectl
@pytest.mark.parametrize("path", OVERLAYS)
def test_manifests_render_and_validate(path: str) -> None:
    import jsonschema
    import kubernetes_validate

    docs = render(path)
    assert docs
    for doc in docs:
        if doc["kind"] in CRD_SCHEMAS:
            schema = json.loads((K8S / "schemas" / CRD_SCHEMAS[doc["kind"]]).read_text())
            jsonschema.validate(doc, schema)
        else:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


@needs_kubectl
def test_one_worker_pool_per_queue_scaled_on_its_depth() -> None:
    docs = render("overlays/production")
    deployments = by_kind(docs, "Deployment")
    scaled = by_kind(docs, "ScaledObject")
    pdbs = by_kind(docs, "PodDisruptionBudget")
    longest_task = celery_config(Settings(), None, None)["task_time_limit"]
    for queue in QUEUES:
        name = f"tempr-worker-{queue}"
        assert worker_queues(deployments[name]) == queue
        spec = deployments[name]["spec"]["template"]["spec"]
        assert spec["terminationGracePeriodSeconds"] > longest_task
        resources = spec["containers"][0]["resources"]
        assert resources["requests"]["cpu"] and resources["requests"]["memory"] and resources["limits"]["memory"]
        trigger = scaled[name]["spec"]["triggers"][0]
        assert scaled[name]["spec"]["scaleTargetRef"]["name"] == name
        assert trigger["type"] == "redis" and trigger["metadata"]["listName"] == queue
        assert pdbs[name]["spec"]["selector"]["matchLabels"] == deployments[name]["spec"]["selector"]["matchLabels"]
    gateway = deployments["tempr-gateway"]["spec"]["template"]["spec"]["containers"][0]
    assert {"readinessProbe", "livenessProbe"} <= set(gateway)
    assert "tempr-flower" in deployments
    assert {d["metadata"].get("namespace") for d in docs if d["kind"] != "Namespace"} == {"tempr"}
    secret_refs = {
        ref["secretRef"]["name"]
        for d in deployments.values()
        for ref in d["spec"]["template"]["spec"]["containers"][0].get("envFrom", [])
        if "secretRef" in ref
    }
    assert secret_refs <= set(by_kind(docs, "Secret"))


@needs_kubectl
def test_gpu_overlay_puts_rerank_on_gpu_nodes() -> None:
    deployments = by_kind(render("overlays/gpu"), "Deployment")
    rerank = deployments["tempr-worker-rerank"]["spec"]["template"]["spec"]
    assert rerank["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert rerank["nodeSelector"] and rerank["tolerations"]
    for name, d in deployments.items():
        if name != "tempr-worker-rerank":
            assert "nvidia.com/gpu" not in d["spec"]["template"]["spec"]["containers"][0]["resources"].get("limits", {})


@needs_kubectl
def test_rabbitmq_overlay_scales_on_amqp_queue_length() -> None:
    docs = render("overlays/rabbitmq")
    for queue in QUEUES:
        trigger = by_kind(docs, "ScaledObject")[f"tempr-worker-{queue}"]["spec"]["triggers"][0]
        assert trigger["type"] == "rabbitmq" and trigger["metadata"]["queueName"] == queue


@needs_compose
@needs_kubectl
def test_compose_file_is_valid_and_matches_the_kubernetes_layout() -> None:
    env = {**os.environ, "TEMPR_WEBHOOK_SECRET": "x"}
    out = subprocess.run(
        ["docker-compose", "-f", str(DEPLOY / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    services = yaml.safe_load(out.stdout)["services"]
    assert "flower" in services and "api" in services
    k8s = by_kind(render("base"), "Deployment")
    for queue in QUEUES:
        cmd = services[queue]["command"]
        assert cmd[cmd.index("--queues") + 1] == worker_queues(k8s[f"tempr-worker-{queue}"])


@needs_compose
def test_compose_config_refuses_a_missing_secret() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TEMPR_WEBHOOK_SECRET"}
    out = subprocess.run(
        ["docker-compose", "-f", str(DEPLOY / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode != 0 and "webhook secret" in out.stderr
