"""A real nginx in front of a real tool-server, configured with deploy/nginx-argent.conf."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from attrs import frozen

from tests.e2e.conftest import Cli, ServerProcess, read_until

pytestmark = pytest.mark.e2e

DEPLOY_CONF = Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "argent.conf"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@frozen
class Nginx:
    url: str
    error_log: Path


def nginx_config(prefix: Path, listen: int, upstream_port: int, *, upload_limit: str | None = None) -> str:
    site = DEPLOY_CONF.read_text()
    site = site.replace("server 127.0.0.1:3001;", f"server 127.0.0.1:{upstream_port};")
    site = site.replace("listen 8080;", f"listen 127.0.0.1:{listen};")
    if upload_limit is not None:
        site = site.replace("client_max_body_size 2g;", f"client_max_body_size {upload_limit};")
    return main_config(prefix, site)


def main_config(prefix: Path, site: str, *, http_extra: str = "access_log off;") -> str:
    """A whole nginx.conf around ``site`` (the server-level config of deploy/): its files under ``prefix``."""
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"{user}daemon off;\nworker_processes 1;\npid {prefix / 'nginx.pid'};\n"
        f"error_log {prefix / 'error.log'} info;\nevents {{ worker_connections 256; }}\n"
        f"http {{\n    {http_extra}\n{temp}\n{site}\n}}\n"
    )


def start_nginx(tmp_path: Path, upstream_port: int, **options: str) -> tuple[subprocess.Popen[bytes], Nginx]:
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    listen = free_port()
    return run_nginx(prefix, nginx_config(prefix, listen, upstream_port, **options), listen)


def run_nginx(prefix: Path, conf_text: str, listen: int) -> tuple[subprocess.Popen[bytes], Nginx]:
    """Start nginx with ``conf_text`` and wait until it accepts connections on ``listen``."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    assert os.path.exists(binary), (
        "nginx is not installed: run scripts/install-system-deps (apt-get install nginx)"
    )
    conf = prefix / "nginx.conf"
    conf.write_text(conf_text)
    proc = subprocess.Popen([binary, "-p", str(prefix), "-c", str(conf)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", listen), timeout=0.2):
                break
        except OSError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            time.sleep(0.05)
    return proc, Nginx(url=f"http://127.0.0.1:{listen}", error_log=prefix / "error.log")


@pytest.fixture
def nginx(tmp_path: Path, server: ServerProcess) -> Iterator[Nginx]:
    port = int(server.url.rsplit(":", 1)[1])
    proc, front = start_nginx(tmp_path, port)
    yield front
    proc.terminate()
    proc.wait(timeout=10)


def test_health_and_auth_pass_through_nginx(nginx: Nginx, server: ServerProcess) -> None:
    with urllib.request.urlopen(f"{nginx.url}/healthz", timeout=5) as resp:
        assert json.loads(resp.read())["ok"] is True
    req = urllib.request.Request(f"{nginx.url}/tools", headers={"Authorization": f"Bearer {server.token}"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        names = [t["name"] for t in json.loads(resp.read())["tools"]]
    assert "flow-execute" in names
    try:
        urllib.request.urlopen(f"{nginx.url}/tools", timeout=5)
    except urllib.error.HTTPError as exc:
        assert exc.code == 401
        assert "Authorization: Bearer <token>" in json.loads(exc.read())["error"]
    else:
        raise AssertionError("nginx let an unauthenticated call through")


def test_progress_streams_through_nginx_as_it_happens(
    cli: Cli, project: Path, nginx: Nginx, server: ServerProcess
) -> None:
    flows = project / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / "slow.yaml").write_text("steps:\n  - echo: first\n  - wait: 3000\n  - echo: last\n")
    run = cli.spawn("flow", "run", "slow", ARGENT_TOOLS_URL=nginx.url, ARGENT_AUTH_TOKEN=server.token)
    assert run.stdout is not None
    t0 = time.monotonic()
    read_until(run.stdout, lambda line: "first" in line)
    first_after = time.monotonic() - t0
    out, err = run.communicate(timeout=60)
    total = time.monotonic() - t0
    assert run.returncode == 0, err
    assert first_after < total - 2.0, "the first progress line was held back until the end"
    assert out.splitlines()[-1] == "PASS — 1 passed, 0 failed, 0 skipped, 0 errored"
