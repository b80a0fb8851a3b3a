"""deploy/: every Kubernetes manifest validates against the API schemas of the Kubernetes versions it
targets (kubernetes-validate ships them: no cluster, no network), in strict mode (an unknown or
misspelt field fails), and has what this fleet needs: /healthz probes, a headless Service with a
named port for nginx's SRV lookup, tokens only from Secrets, an Indexed Job whose shard spec
matches its completions. The kustomization names only files that exist."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from ruamel.yaml import YAML

from argent.limits import INLINE_MEMBERS_BUDGET, KEEPALIVE_TIMEOUT_SECONDS, MAX_FILE_BYTES, MIB

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
MANIFESTS = sorted((DEPLOY / "k8s").glob("*.yaml"))
#: The oldest version the Job needs (backoffLimitPerIndex, podFailurePolicy FailIndex) and the newest schema shipped.
VERSIONS = ("1.29.0", kubernetes_validate.latest_version())
TOOL_SERVER_PORT = 3001


def load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in YAML(typ="safe").load_all(path.read_text()) if doc is not None]


def documents() -> list[tuple[str, dict[str, Any]]]:
    return [(f"{path.name}:{doc['kind']}", doc) for path in MANIFESTS for doc in load(path)]


def by_kind(kind: str, name: str) -> dict[str, Any]:
    found = [doc for _, doc in documents() if doc["kind"] == kind and doc["metadata"]["name"] == name]
    assert len(found) == 1, (kind, name)
    return found[0]


def containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"]
    return list(spec.get("initContainers", [])) + list(spec["containers"])


def walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def test_the_manifests_are_there() -> None:
    kinds = sorted(name for name, _ in documents())
    assert kinds == [
        "fleet-nginx.yaml:Deployment",
        "fleet-nginx.yaml:Service",
        "namespace.yaml:Namespace",
        "suite-job.yaml:Job",
        "suite-job.yaml:PersistentVolumeClaim",
        "tool-server.yaml:Deployment",
        "tool-server.yaml:Service",
    ]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("name", "doc"), documents(), ids=[name for name, _ in documents()])
def test_each_manifest_validates_strictly(name: str, doc: dict[str, Any], version: str) -> None:
    kubernetes_validate.validate(doc, version, strict=True)


def test_the_validator_refuses_a_misspelt_field() -> None:
    """The check above has teeth: strict mode fails a field the API does not have."""
    doc = by_kind("Deployment", "argent-tool-server")
    broken = {**doc, "spec": {**doc["spec"], "replica": 3}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)


def test_every_object_is_in_the_argent_namespace() -> None:
    for name, doc in documents():
        if doc["kind"] != "Namespace":
            assert doc["metadata"].get("namespace") == "argent", name


def test_tool_servers_are_probed_on_healthz_and_bound_to_the_pod() -> None:
    deployment = by_kind("Deployment", "argent-tool-server")
    (container,) = containers(deployment)
    assert container["args"][:2] == ["server", "start"]
    args = container["args"]
    assert args[args.index("--host") + 1] == "$(POD_IP)"
    assert args[args.index("--port") + 1] == str(TOOL_SERVER_PORT)
    env = {e["name"]: e for e in container["env"]}
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    (port,) = container["ports"]
    assert (port["name"], port["containerPort"]) == ("http", TOOL_SERVER_PORT)
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}, probe
    assert container["resources"]["requests"] and container["resources"]["limits"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_the_tool_server_service_is_headless_with_the_port_nginx_resolves() -> None:
    service = by_kind("Service", "argent-tool-server")
    deployment = by_kind("Deployment", "argent-tool-server")
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    (port,) = service["spec"]["ports"]
    assert (port["name"], port["port"], port["targetPort"]) == ("http", TOOL_SERVER_PORT, "http")
    # nginx asks for the SRV records _http._tcp.<service>.<namespace>.svc.cluster.local.
    template = (DEPLOY / "nginx" / "fleet.conf.template").read_text()
    name, namespace = service["metadata"]["name"], service["metadata"]["namespace"]
    assert f"server {name}.{namespace}.svc.cluster.local service={port['name']} resolve;" in template
    assert "hash $http_x_argent_affinity consistent;" in template


def test_the_fleet_nginx_mounts_the_generated_template_and_serves_the_clients_port() -> None:
    deployment = by_kind("Deployment", "argent-fleet")
    (container,) = containers(deployment)
    image = container["image"]
    major, minor, *_ = (int(p) for p in re.findall(r"\d+", image.rsplit(":", 1)[1]))
    assert (major, minor) >= (1, 28), "resolve and service= need nginx >= 1.27.3 (1.28 stable)"
    assert {"name": "NGINX_ENTRYPOINT_LOCAL_RESOLVERS", "value": "1"} in container["env"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes[mounts["/etc/nginx/templates"]]["configMap"]["name"] == "argent-fleet-nginx"
    assert "emptyDir" in volumes[mounts["/etc/nginx/conf.d"]]  # no default.conf beside ours
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert "tcpSocket" in container["livenessProbe"]
    (port,) = container["ports"]
    assert "listen 8080;" in (DEPLOY / "nginx" / "fleet.conf.template").read_text()
    assert port["containerPort"] == 8080
    service = by_kind("Service", "argent-fleet")
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    job = by_kind("Job", "argent-suite")
    (suite,) = containers(job)
    url = {e["name"]: e.get("value") for e in suite["env"]}["ARGENT_TOOLS_URL"]
    assert url == f"http://argent-fleet.argent.svc.cluster.local:{service['spec']['ports'][0]['port']}"


def test_the_suite_job_is_indexed_and_its_shards_match_its_completions() -> None:
    job = by_kind("Job", "argent-suite")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    (container,) = containers(job)
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert spec["completions"] == spec["parallelism"] == int(env["SHARDS"])
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert container["command"] == ["/bin/sh", "-c"]
    (line,) = container["args"]
    assert line.startswith("exec argent flow run ")
    assert '--shard "$((JOB_COMPLETION_INDEX + 1))/$SHARDS"' in line
    assert re.search(r'--junit-xml "/reports/[^"]*\$\(\(JOB_COMPLETION_INDEX \+ 1\)\)[^"]*\.xml"', line)
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}
    claim = volumes[mounts["/reports"]]["persistentVolumeClaim"]["claimName"]
    assert by_kind("PersistentVolumeClaim", claim)["spec"]["accessModes"] == ["ReadWriteMany"]
    codes = [r["onExitCodes"] for r in spec["podFailurePolicy"]["rules"] if "onExitCodes" in r]
    assert codes == [{"containerName": "suite", "operator": "In", "values": [1, 2]}]


def test_tokens_come_from_secrets_never_from_the_files() -> None:
    for name, doc in documents():
        assert doc["kind"] != "Secret", f"{name}: a Secret holds a token literally; create it with kubectl"
        for node in walk(doc):
            is_env = isinstance(node, dict) and ("value" in node or "valueFrom" in node)
            if is_env and "TOKEN" in str(node.get("name")).upper():
                assert "value" not in node, name
                assert node["valueFrom"]["secretKeyRef"] == {"name": "argent-auth", "key": "token"}, name
            if isinstance(node, str):
                assert "--token" not in node and "argent://" not in node, (name, node)


def test_every_pod_runs_as_non_root_without_privileges() -> None:
    for name, doc in documents():
        if "template" not in doc.get("spec", {}):
            continue
        pod = doc["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["runAsUser"] != 0, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert pod["automountServiceAccountToken"] is False, name
        for container in containers(doc):
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["capabilities"]["drop"] == ["ALL"], name
            assert container["resources"]["requests"] and container["resources"]["limits"], name


def test_the_kustomization_names_files_that_exist() -> None:
    kustomization = YAML(typ="safe").load((DEPLOY / "kustomization.yaml").read_text())
    assert kustomization["kind"] == "Kustomization"
    assert sorted(kustomization["resources"]) == sorted(
        f"k8s/{p.name}" for p in MANIFESTS if p.name != "suite-job.yaml"
    )
    (generated,) = kustomization["configMapGenerator"]
    assert generated["name"] == "argent-fleet-nginx"
    (entry,) = generated["files"]
    key, path = entry.split("=", 1)
    assert key == "fleet.conf.template" and (DEPLOY / path).is_file()
    (image,) = kustomization["images"]
    assert by_kind("Deployment", "argent-tool-server")["spec"]["template"]["spec"]["containers"][0][
        "image"
    ].startswith(image["name"] + ":")


def test_the_readme_explains_each_file() -> None:
    readme = (DEPLOY / "README.md").read_text()
    for name in (
        "Dockerfile",
        "kustomization.yaml",
        "nginx/fleet.conf.template",
        *(f"k8s/{p.name}" for p in MANIFESTS),
    ):
        assert f"`{name}`" in readme, name


def nginx_blocks(text: str) -> dict[str, str]:
    """The bodies of the template's `upstream` and `location` blocks (none of them nests a block)."""
    return {
        match["head"].strip(): match["body"]
        for match in re.finditer(
            r"^\s*(?P<head>(?:upstream|location) [^{]*)\{(?P<body>[^{}]*)\}", text, re.MULTILINE
        )
    }


def seconds(body: str, directive: str) -> float:
    match = re.search(rf"^\s*{directive} (\d+)s;", body, re.MULTILINE)
    assert match is not None, directive
    return float(match[1])


def test_the_fleet_nginx_config_streams_takes_uploads_and_outlives_long_steps() -> None:
    template = (DEPLOY / "nginx" / "fleet.conf.template").read_text()
    blocks = nginx_blocks(template)
    assert set(blocks) == {"upstream argent_fleet", "location /", "location = /upload"}
    upstream = blocks["upstream argent_fleet"]
    assert "hash $http_x_argent_affinity consistent;" in upstream and "zone argent_fleet" in upstream
    # nginx drops an idle upstream connection before the tool-server would.
    assert seconds(upstream, "keepalive_timeout") < KEEPALIVE_TIMEOUT_SECONDS
    for name in ("location /", "location = /upload"):
        body = blocks[name]
        assert "proxy_pass http://argent_fleet;" in body and "proxy_http_version 1.1;" in body, name
        assert "proxy_set_header Host 127.0.0.1;" in body, name
        assert seconds(body, "proxy_read_timeout") >= 600, name
    assert "proxy_buffering off;" in blocks["location /"]
    upload = blocks["location = /upload"]
    assert "proxy_request_buffering off;" in upload and "client_max_body_size 2g;" in upload
    # A call's body: its inline members and an inlined file argument, with room for base64 and JSON.
    limit = re.search(r"^    client_max_body_size (\d+)m;", template, re.MULTILINE)
    assert limit is not None and int(limit[1]) * MIB > MAX_FILE_BYTES * 4 // 3 + INLINE_MEMBERS_BUDGET
