"""deploy/Dockerfile, parsed (dockerfile-parse): Debian with Debian's chromium, argent installed from the
repository, a non-root user the Kubernetes pods run as, `argent server start` on the port the manifests
probe, and a HEALTHCHECK on /healthz. Building it needs a Docker daemon and the base image's registry,
which this machine has not: the build itself is not run here."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from dockerfile_parse import DockerfileParser
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def parsed() -> DockerfileParser:
    return DockerfileParser(path=str(DOCKERFILE))


def final_stage() -> list[dict[str, Any]]:
    """The instructions of the last stage (the image that runs)."""
    out: list[dict[str, Any]] = []
    for instruction in parsed().structure:
        if instruction["instruction"] == "FROM":
            out = []
        out.append(instruction)
    return out


def values(instructions: list[dict[str, Any]], name: str) -> list[str]:
    return [i["value"] for i in instructions if i["instruction"] == name]


def exec_form(value: str) -> list[str]:
    """A JSON-array instruction; the shell form is refused (signals would go to a shell)."""
    words = json.loads(value)
    assert isinstance(words, list) and all(isinstance(w, str) for w in words), value
    return words


def tool_server_pod() -> dict[str, Any]:
    docs = YAML(typ="safe").load_all((ROOT / "deploy" / "k8s" / "tool-server.yaml").read_text())
    deployment = next(d for d in docs if d and d["kind"] == "Deployment")
    return dict(deployment["spec"]["template"]["spec"])


def test_every_stage_is_debian() -> None:
    bases = values(parsed().structure, "FROM")
    assert len(bases) == 2
    for base in bases:
        assert re.fullmatch(r"debian:[a-z]+-slim( AS \w+)?", base), base


def test_the_image_installs_debians_chromium_and_firefox_and_no_other_browser() -> None:
    runs = " ".join(values(final_stage(), "RUN"))
    installs = re.findall(r"apt-get install ([^&]*)", runs)
    assert len(installs) == 1
    packages = set(shlex.split(installs[0].replace("\\\n", " "))) - {"-y", "--no-install-recommends"}
    assert {"chromium", "firefox-esr", "python3", "tini"} <= packages
    assert "rm -rf /var/lib/apt/lists/*" in runs
    assert not re.search(r"curl|wget|playwright|puppeteer", runs)
    env = parsed().envs
    assert env["ARGENT_CHROMIUM"] == "chromium"
    assert env["ARGENT_FIREFOX"] == "firefox-esr"


def test_argent_is_installed_from_the_repository_files_it_copies() -> None:
    structure = parsed().structure
    copies = [v.split() for v in values(structure, "COPY") if not v.startswith("--from")]
    sources = [src for words in copies for src in words[:-1]]
    assert {"pyproject.toml", "setup.cfg", "README.md", "argent"} <= set(sources)
    for source in sources:
        assert (ROOT / source).exists(), source
    runs = " ".join(values(structure, "RUN"))
    assert re.search(r"/opt/argent/bin/pip install [^&]*\.(\s|$)", runs)
    assert "COPY --from=build /opt/argent /opt/argent" in [f"COPY {v}" for v in values(final_stage(), "COPY")]


def test_it_runs_as_the_non_root_user_the_pods_name() -> None:
    stage = final_stage()
    (user,) = values(stage, "USER")
    uid, gid = (int(part) for part in user.split(":"))
    assert uid != 0 and gid != 0
    runs = " ".join(values(stage, "RUN"))
    assert f"useradd --system --uid {uid}" in runs and f"groupadd --system --gid {gid}" in runs
    pod = tool_server_pod()["securityContext"]
    assert (pod["runAsUser"], pod["runAsGroup"]) == (uid, gid)
    # Its home is where the pod mounts a writable volume (the root file system is read-only).
    assert parsed().envs["HOME"] == "/home/argent"
    mounts = [m["mountPath"] for m in tool_server_pod()["containers"][0]["volumeMounts"]]
    assert "/home/argent" in mounts and "/tmp" in mounts


def test_it_starts_the_tool_server_under_tini_on_the_port_it_exposes_and_checks() -> None:
    stage = final_stage()
    (entrypoint,) = values(stage, "ENTRYPOINT")
    (cmd,) = values(stage, "CMD")
    (exposed,) = values(stage, "EXPOSE")
    assert exec_form(entrypoint) == ["tini", "--", "argent"]
    words = exec_form(cmd)
    assert words[:2] == ["server", "start"]
    port = words[words.index("--port") + 1]
    assert exposed == port == "3001"
    assert "--no-auth" not in words and "--token" not in words
    assert tool_server_pod()["containers"][0]["ports"][0]["containerPort"] == int(port)
    (healthcheck,) = values(stage, "HEALTHCHECK")
    options, _, command = healthcheck.partition("CMD")
    assert re.search(r"--interval=\d+s", options) and re.search(r"--timeout=\d+s", options)
    probe = exec_form(command.strip())
    assert f"http://127.0.0.1:{port}/healthz" in " ".join(probe)


def test_no_token_is_baked_into_the_image() -> None:
    text = DOCKERFILE.read_text()
    assert not [k for k in parsed().envs if "TOKEN" in k.upper()]
    assert not re.search(r"^\s*ARG\s+\w*TOKEN", text, re.MULTILINE | re.IGNORECASE)
    assert not re.search(r"ARGENT_AUTH_TOKEN=\S", text)


def test_chromium_runs_without_its_own_sandbox_inside_the_container() -> None:
    """Debian's /usr/bin/chromium sources /etc/chromium.d/*: the container adds --no-sandbox there."""
    runs = values(final_stage(), "RUN")
    assert any("--no-sandbox" in run and "/etc/chromium.d/" in run for run in runs)
