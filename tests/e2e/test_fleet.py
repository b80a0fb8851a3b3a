"""INTERFACE.md §10: a fleet of real `argent server start` processes behind a real nginx.

nginx runs deploy/nginx/fleet.conf.template as shipped, with only what a machine without a cluster
must change: the listen port, its access log file, the resolver, and the one `server ... resolve;`
line (the pods of the headless Service) replaced by the three local tool-servers. Its access log
(the template's own `argent_fleet` format) says which tool-server each request reached and with
which affinity value. Every flow's members exceed the 256 KiB inline budget, so each call uploads
first; an upload that reached another tool-server than its call fails the call ("Upload ... was
not found on the tool-server"), so a run that passes proves the routing as much as the log does.
The control run hashes on a per-request id instead (no affinity) and fails that way.
"""

from __future__ import annotations

import os
import re
import signal
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import pytest

from tests.e2e.conftest import Cli, ServerProcess, read_until, start_server_process
from tests.e2e.test_nginx import Nginx, free_port, main_config, run_nginx

pytestmark = pytest.mark.e2e

FLEET_TEMPLATE = Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "fleet.conf.template"
TOKEN = "fleet-token-" + "f" * 40
SERVERS = 3
FLOWS = 30
WORKERS = 6
CONTROL_FLOWS = 12
#: Over the 256 KiB inline budget: the fragment travels as an upload.
FRAGMENT_BYTES = 300 * 1024
POD_LINE = re.compile(r"^\s*server \S+ service=http resolve;\n", re.MULTILINE)
HASH_LINE = "    hash $http_x_argent_affinity consistent;\n"
LOG_LINE = re.compile(
    r'"(?P<method>[A-Z]+) (?P<uri>\S+) HTTP/1\.1" (?P<status>\d{3}) \d+ '
    r'upstream=(?P<upstream>\S+) affinity="(?P<affinity>[^"]*)"'
)


@attrs.frozen
class Logged:
    method: str
    uri: str
    status: int
    upstream: str
    affinity: str


@attrs.frozen
class Fleet:
    nginx: Nginx
    servers: list[ServerProcess]
    access_log: Path

    def mark(self) -> int:
        """Where the log ends now: ``requests(since=...)`` reads only what comes after."""
        return self.access_log.stat().st_size

    def requests(self, since: int = 0) -> list[Logged]:
        out = []
        with self.access_log.open("rb") as handle:
            handle.seek(since)
            text = handle.read().decode()
        for line in text.splitlines():
            match = LOG_LINE.search(line)
            assert match is not None, line
            out.append(
                Logged(
                    match["method"], match["uri"], int(match["status"]), match["upstream"], match["affinity"]
                )
            )
        return out

    def requests_until(self, *, since: int, calls: int) -> list[Logged]:
        """The requests since ``since`` once ``calls`` flow calls are logged: nginx writes a line when
        it has finished a request, which may come just after the client read the end of the answer."""
        deadline = time.monotonic() + 10
        while True:
            logged = self.requests(since)
            done = sum(1 for r in logged if r.uri == "/tools/flow-execute")
            if done >= calls or time.monotonic() > deadline:
                return logged
            time.sleep(0.05)

    @property
    def addresses(self) -> set[str]:
        return {s.url.removeprefix("http://") for s in self.servers}


def fleet_site(prefix: Path, listen: int, ports: list[int], *, key: str | None = None) -> str:
    """The shipped template, with the cluster's parts replaced by this machine's."""
    site = FLEET_TEMPLATE.read_text()
    assert len(POD_LINE.findall(site)) == 1 and site.count(HASH_LINE) == 1
    site = POD_LINE.sub("".join(f"    server 127.0.0.1:{port};\n" for port in ports), site)
    site = site.replace("${NGINX_LOCAL_RESOLVERS}", "127.0.0.1")
    site = site.replace(
        "access_log /dev/stdout argent_fleet;", f"access_log {prefix / 'access.log'} argent_fleet;"
    )
    site = site.replace("listen 8080;", f"listen 127.0.0.1:{listen};")
    if key is not None:
        site = site.replace(HASH_LINE, HASH_LINE.replace("$http_x_argent_affinity", key))
    return site


def start_fleet(cli: Cli, tmp_path: Path, *, key: str | None = None) -> tuple[Fleet, list[object]]:
    with ThreadPoolExecutor(SERVERS) as pool:  # each start waits for its banner: overlap the three
        servers = list(pool.map(lambda _: start_server_process(cli, ARGENT_AUTH_TOKEN=TOKEN), range(SERVERS)))
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    listen = free_port()
    ports = [int(s.url.rsplit(":", 1)[1]) for s in servers]
    site = fleet_site(prefix, listen, ports, key=key)
    proc, front = run_nginx(prefix, main_config(prefix, site, http_extra=""), listen)
    return Fleet(front, servers, prefix / "access.log"), [proc, *servers]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """One fleet for the module's tests: starting three tool-servers is the slow part."""
    root = tmp_path_factory.mktemp("fleet")
    (root / "home").mkdir()
    running, parts = start_fleet(Cli(home=root / "home", cwd=root), root)
    yield running
    stop(parts)


@pytest.fixture
def per_request(cli: Cli, tmp_path: Path) -> Iterator[Fleet]:
    """The fleet hashing on a value nginx draws for each request: no affinity at all."""
    running, parts = start_fleet(cli, tmp_path, key="$request_id")
    yield running
    stop(parts)


def stop(parts: list[object]) -> None:
    for part in parts:
        if isinstance(part, ServerProcess):
            part.stop(signal.SIGKILL)
        else:
            assert hasattr(part, "terminate") and hasattr(part, "wait")
            part.terminate()
            part.wait(timeout=10)


def write_suite(project: Path, count: int) -> Path:
    """``count`` flows, each running its own fragment of FRAGMENT_BYTES (random hex, so it stays big)."""
    flows = project / ".argent" / "flows"
    parts = flows / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        (parts / f"big-{index:02}.yaml").write_text(
            f"steps:\n  - echo: fragment {index:02}\n#" + os.urandom(FRAGMENT_BYTES // 2).hex() + "\n"
        )
        (flows / f"flow-{index:02}.yaml").write_text(
            f"steps:\n  - echo: flow {index:02} starts\n  - run: parts/big-{index:02}.yaml\n"
            f"  - echo: flow {index:02} ends\n"
        )
    return flows


def test_thirty_uploading_flows_on_six_workers_pass_through_a_fleet_of_three(
    cli: Cli, project: Path, fleet: Fleet, tmp_path: Path
) -> None:
    flows = write_suite(project, FLOWS)
    junit = tmp_path / "junit.xml"
    start = fleet.mark()
    done = cli.run(
        "flow", "run", str(flows), "--workers", str(WORKERS), "--junit-xml", str(junit),
        ARGENT_TOOLS_URL=fleet.nginx.url, ARGENT_AUTH_TOKEN=TOKEN, ARGENT_FLOW_FILES_LOG="1", timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (
        done.stdout.splitlines()[-1]
        == f"PASS — {FLOWS} flows: {FLOWS} passed, 0 failed, 0 errored, 0 skipped"
    )
    for index in range(FLOWS):
        assert (
            f"[.argent/flows/flow-{index:02}.yaml] PASS — 1 passed, 0 failed, 0 skipped, 0 errored"
            in done.stdout
        )
        size = (flows / "parts" / f"big-{index:02}.yaml").stat().st_size
        assert f"[flow-files] flow {flows}/parts/big-{index:02}.yaml: upload {size}" in done.stderr
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (str(FLOWS), "0", "0")

    logged = fleet.requests_until(since=start, calls=FLOWS)
    calls = [r for r in logged if r.method == "POST" and r.uri == "/tools/flow-execute"]
    uploads = [r for r in logged if r.method == "POST" and r.uri == "/upload"]
    assert len(calls) == FLOWS and len(uploads) >= FLOWS
    assert all(r.status == 200 for r in calls + uploads), [r for r in calls + uploads if r.status != 200]
    # One fresh value per call, and every upload carries the value of a call.
    values = {c.affinity for c in calls}
    assert len(values) == FLOWS and all(re.fullmatch(r"[0-9a-f]{32}", v) for v in values)
    assert {u.affinity for u in uploads} <= values
    # A call and its uploads reached one tool-server (nginx tried no second one), one of ours.
    reached: dict[str, set[str]] = defaultdict(set)
    for request in calls + uploads:
        reached[request.affinity].add(request.upstream)
    assert all(len(upstreams) == 1 for upstreams in reached.values()), reached
    used = {c.upstream for c in calls}
    assert used <= fleet.addresses
    # ... and the calls were spread: more than one tool-server ran them.
    assert len(used) > 1, used


def test_progress_streams_through_the_fleet_as_it_happens(cli: Cli, project: Path, fleet: Fleet) -> None:
    """The template's `proxy_buffering off`: a step's line arrives while the flow still runs."""
    flows = project / ".argent" / "flows"
    (flows / "slow.yaml").write_text("steps:\n  - echo: first\n  - wait: 3000\n  - echo: last\n")
    run = cli.spawn("flow", "run", "slow", ARGENT_TOOLS_URL=fleet.nginx.url, ARGENT_AUTH_TOKEN=TOKEN)
    assert run.stdout is not None
    t0 = time.monotonic()
    read_until(run.stdout, lambda line: "first" in line)
    first_after = time.monotonic() - t0
    out, err = run.communicate(timeout=60)
    total = time.monotonic() - t0
    assert run.returncode == 0, err
    assert "last" in out
    assert first_after < total - 2.0, "the first progress line was held back until the end"


def test_without_affinity_a_calls_uploads_miss_its_tool_server(
    cli: Cli, project: Path, per_request: Fleet
) -> None:
    """The control: each request hashed on its own random id. An upload reaches the call's tool-server
    with a chance of 1/3, independently for each of the 12 flows: all pass with a chance of 2e-6."""
    flows = write_suite(project, CONTROL_FLOWS)
    done = cli.run(
        "flow", "run", str(flows), "--workers", str(WORKERS),
        ARGENT_TOOLS_URL=per_request.nginx.url, ARGENT_AUTH_TOKEN=TOKEN, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "was not found on the tool-server" in done.stdout + done.stderr
    logged = per_request.requests_until(since=0, calls=CONTROL_FLOWS)
    reached: dict[str, set[str]] = defaultdict(set)
    for request in logged:
        if request.affinity:
            reached[request.affinity].add(request.upstream)
    assert any(len(upstreams) > 1 for upstreams in reached.values())
