"""The command of deploy/k8s/suite-job.yaml, run as each of its pods would run it.

For every JOB_COMPLETION_INDEX the Job's own `sh -c` line runs the real `argent` against a real
tool-server, with only the cluster's parts replaced: the tool-server's URL and the /reports volume.
Together the pods' JUnit files hold every flow once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.e2e.conftest import Cli, ServerProcess

pytestmark = pytest.mark.e2e

JOB = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "suite-job.yaml"


def suite_container() -> tuple[dict[str, Any], dict[str, Any]]:
    docs = YAML(typ="safe").load_all(JOB.read_text())
    job = next(d for d in docs if d and d["kind"] == "Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return job, container


def test_each_pod_of_the_job_runs_its_shard_and_together_they_run_every_flow_once(
    cli: Cli, project: Path, server: ServerProcess, tmp_path: Path
) -> None:
    job, container = suite_container()
    shards = job["spec"]["completions"]
    flows = project / ".argent" / "flows"  # the project is the pod's working directory
    names = [f"flow-{i:02}" for i in range(2 * shards + 1)]
    for name in names:
        (flows / f"{name}.yaml").write_text(f"steps:\n  - echo: {name}\n")
    reports = tmp_path / "reports"
    reports.mkdir()
    (line,) = container["args"]
    line = line.replace("/reports/", f"{reports}/")
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    env.update(ARGENT_TOOLS_URL=server.url, ARGENT_AUTH_TOKEN=server.token)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    pods = [
        subprocess.Popen(
            [*container["command"], line],
            cwd=project,
            env=cli.env(**env, JOB_COMPLETION_INDEX=str(index)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        for index in range(shards)
    ]
    outputs = [pod.communicate(timeout=120) for pod in pods]
    for pod, (out, err) in zip(pods, outputs, strict=True):
        assert pod.returncode == 0, out + err
    files = sorted(reports.iterdir())
    assert [f.name for f in files] == [f"junit-{i}-of-{shards}.xml" for i in range(1, shards + 1)]
    ran = [case.get("name") for f in files for case in ET.parse(f).getroot().iter("testcase")]
    assert sorted(ran) == [f".argent/flows/{name}.yaml" for name in names]
