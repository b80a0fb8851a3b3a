"""docs/deploy-nginx.md's "Try it on your machine" recipe, as written: its nginx.conf (ports and the
temp directory swapped for free ones) includes deploy/nginx/argent.conf and puts a real nginx in front
of a real tool-server, which `argent tools list` then reaches through it."""

from __future__ import annotations

import os
import re
import signal
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, start_server_process
from tests.e2e.test_nginx import DEPLOY_CONF, free_port, run_nginx

pytestmark = pytest.mark.e2e

DOC = Path(__file__).parents[2] / "docs" / "deploy-nginx.md"


def recipe() -> str:
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S) if "<<CONF" in b]
    assert len(blocks) == 1
    return blocks[0]


def test_the_documented_local_recipe_runs_nginx_in_front_of_the_server(cli: Cli, tmp_path: Path) -> None:
    block = recipe()
    conf = re.search(r"<<CONF\n(.*?)\nCONF\n", block, re.S)
    assert conf is not None
    assert "nginx -p /tmp/argent-nginx -c /tmp/argent-nginx/nginx.conf" in block
    server = start_server_process(cli, "--host", "127.0.0.1")
    try:
        listen = free_port()
        site = DEPLOY_CONF.read_text()
        site = site.replace("server 127.0.0.1:3001;", f"server {server.url.removeprefix('http://')};")
        site = site.replace("listen 8080;", f"listen 127.0.0.1:{listen};")
        (tmp_path / "argent.conf").write_text(site)
        text = conf.group(1).replace("/tmp/argent-nginx", str(tmp_path))
        text = text.replace("$PWD/deploy/nginx/argent.conf", str(tmp_path / "argent.conf"))
        if os.geteuid() == 0:  # as the doc says: workers of a root nginx run as nobody otherwise
            text = "user root;\n" + text
        proc, front = run_nginx(tmp_path, text, listen)
        try:
            with urllib.request.urlopen(f"{front.url}/healthz", timeout=10) as answer:
                assert answer.status == 200 and b'"ok": true' in answer.read()
            listed = cli.run("tools", "list", ARGENT_TOOLS_URL=front.url, ARGENT_AUTH_TOKEN=server.token)
            assert listed.returncode == 0, listed.stderr
            assert "flow-execute" in listed.stdout
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    finally:
        server.stop(signal.SIGTERM)
