"""Flows over a link through a real nginx (deploy/nginx/argent.conf) in front of `argent server start`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, ServerProcess
from tests.e2e.test_nginx import Nginx, start_nginx

pytestmark = pytest.mark.e2e


def big_fragment(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # random hex does not compress: the archive is about as large as the file
    path.write_text("steps:\n  - echo: big fragment\n#" + os.urandom(size // 2).hex() + "\n")


@pytest.fixture
def tight_nginx(tmp_path: Path, server: ServerProcess) -> Iterator[Nginx]:
    proc, front = start_nginx(tmp_path, int(server.url.rsplit(":", 1)[1]), upload_limit="64k")
    yield front
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def nginx(tmp_path: Path, server: ServerProcess) -> Iterator[Nginx]:
    proc, front = start_nginx(tmp_path, int(server.url.rsplit(":", 1)[1]))
    yield front
    proc.terminate()
    proc.wait(timeout=10)


def test_a_413_from_nginx_on_upload_sends_no_call_and_names_the_size(
    cli: Cli, project: Path, tight_nginx: Nginx, server: ServerProcess
) -> None:
    flows = project / ".argent" / "flows"
    (flows / "main.yaml").write_text("steps:\n  - echo: never\n  - run: big.yaml\n")
    big_fragment(flows / "big.yaml", 400_000)
    done = cli.run(
        "flow", "run", "main", ARGENT_TOOLS_URL=tight_nginx.url, ARGENT_AUTH_TOKEN=server.token, timeout=60
    )
    assert done.returncode == 1
    assert "never" not in done.stdout
    message = done.stderr
    assert "failed: 413 Request Entity Too Large" in message
    assert f"archive of {flows}/big.yaml" in message
    needed = int(message.split("at least ")[1].split(" bytes")[0])
    assert needed > 64 * 1024
    assert "on POST /upload (for example client_max_body_size in nginx)" in message
    assert "The call was not sent." in message


def test_a_run_with_uploaded_members_passes_through_nginx(
    cli: Cli, project: Path, nginx: Nginx, server: ServerProcess
) -> None:
    flows = project / ".argent" / "flows"
    (flows / "main.yaml").write_text("steps:\n  - run: big.yaml\n  - run: small.yaml\n")
    big_fragment(flows / "big.yaml", 400_000)
    (flows / "small.yaml").write_text("steps:\n  - echo: small fragment\n")
    done = cli.run(
        "flow",
        "run",
        "main",
        ARGENT_TOOLS_URL=nginx.url,
        ARGENT_AUTH_TOKEN=server.token,
        ARGENT_FLOW_FILES_LOG="1",
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "big fragment" in done.stdout and "small fragment" in done.stdout
    size = (flows / "big.yaml").stat().st_size
    assert f"[flow-files] flow {flows}/big.yaml: upload {size}" in done.stderr.splitlines()
