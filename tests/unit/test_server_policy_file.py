"""`argent server start --config FILE.yaml`: what the file may say, and how a bad one is told."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from argent.limits import DEFAULT_CONCURRENT_CALLS_PER_TOKEN, MAX_STEPS_PER_CALL, MIN_TOKEN_CHARS
from argent.server.policy import PolicyFileError, ServerPolicy, load_policy

CI = "c" * 32
DEV = "d" * 32
ENV = {"ARGENT_TOKEN_CI": CI, "ARGENT_TOKEN_DEV": DEV}


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "team.yaml"
    path.write_text(text)
    return str(path)


def refusal(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> str:
    path = config(tmp_path, text)
    with pytest.raises(PolicyFileError) as info:
        load_policy(path, ENV if environ is None else environ)
    message = str(info.value)
    assert message.startswith(f"{path}: ") or message.startswith("cannot read the config file")
    return message.replace(f"{path}: ", "")


def test_a_full_file(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    projects.mkdir()
    path = config(
        tmp_path,
        f"""
tokens:
  - name: ci
    token_env: ARGENT_TOKEN_CI
    tools: [flow-execute, flow-read-prerequisite]
  - name: dev
    token_env: ARGENT_TOKEN_DEV
    tools: ["*"]
project_roots: [{projects}]
local_flows: false
scripts: false
limits:
  concurrent_calls_per_token: 3
  steps_per_call: 500
""",
    )
    policy = load_policy(path, ENV)
    assert [(t.name, t.token, t.tools) for t in policy.tokens] == [
        ("ci", CI, ("flow-execute", "flow-read-prerequisite")),
        ("dev", DEV, ("*",)),
    ]
    assert policy.project_roots == (os.path.realpath(projects),)
    assert (policy.local_flows, policy.scripts, policy.concurrent_calls_per_token) == (False, False, 3)
    assert policy.steps_per_call == 500
    assert CI not in repr(policy)
    ci = policy.for_token(policy.tokens[0])
    assert ci.allows("flow-execute") and not ci.allows("flow-start-recording")
    assert policy.match(DEV) is policy.tokens[1] and policy.match(DEV + "x") is None


def test_an_empty_file_is_the_default_policy(tmp_path: Path) -> None:
    policy = load_policy(config(tmp_path, ""), {})
    default = ServerPolicy()
    assert (policy.tokens, policy.project_roots, policy.local_flows, policy.scripts) == ((), (), True, True)
    assert (
        policy.concurrent_calls_per_token
        == default.concurrent_calls_per_token
        == DEFAULT_CONCURRENT_CALLS_PER_TOKEN
    )
    assert policy.steps_per_call == default.steps_per_call == MAX_STEPS_PER_CALL


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "script: false\n",
            "unknown key script — did you mean scripts? (allowed: tokens, project_roots, local_flows, scripts, overwrite_flows, limits)",
        ),
        (
            "scripts: false\nlocal_flow: false\nproject_root: [/srv]\n",
            "unknown key local_flow, project_root — did you mean local_flow -> local_flows, project_root -> "
            "project_roots? (allowed: tokens, project_roots, local_flows, scripts, overwrite_flows, limits)",
        ),
        ("scripts: no-thanks\n", "scripts: must be true or false, got text"),
        ('local_flows: "false"\n', "local_flows: must be true or false, got text"),
        ("project_roots: /srv\n", "project_roots: must be a list, got text"),
        ("project_roots: [3]\n", "project_roots[0]: must be text, got a number"),
        (
            "limits: 3\n",
            "limits: must be a mapping of concurrent_calls_per_token, steps_per_call, devices_per_token, "
            "seconds_per_call; got a number",
        ),
        (
            "limits:\n  concurrent_calls: 3\n",
            "limits: unknown key concurrent_calls (allowed: concurrent_calls_per_token, steps_per_call, devices_per_token, "
            "seconds_per_call)",
        ),
        (
            "limits:\n  concurrent_calls_per_token: 0\n",
            "limits.concurrent_calls_per_token: must be at least 1, got 0",
        ),
        ("limits:\n  steps_per_call: 0\n", "limits.steps_per_call: must be at least 1, got 0"),
        ("limits:\n  steps_per_call: many\n", "limits.steps_per_call: must be a whole number, got text"),
        (
            "limits:\n  concurrent_calls_per_token: true\n",
            "limits.concurrent_calls_per_token: must be a whole number, got true/false",
        ),
        ("tokens: ci\n", "tokens: must be a list, got text"),
        ("tokens: []\n", "tokens: name at least one token, or leave tokens out"),
        ("tokens:\n  - name: ci\n    tools: ['*']\n", "tokens[0].token_env: is required"),
        (
            "tokens:\n  - name: ci\n    token_env: ARGENT_TOKEN_CI\n    tools: flow-execute\n",
            "tokens[0].tools: must be a list, got text",
        ),
        (
            "tokens:\n  - name: ci\n    token_env: ARGENT_TOKEN_CI\n    tools: ['*']\n    token: abc\n",
            "tokens[0]: unknown key token (allowed: name, token_env, tools)",
        ),
        (
            "tokens:\n  - name: ci\n    token_evn: ARGENT_TOKEN_CI\n    tools: ['*']\n",
            "tokens[0].token_env: is required\n"
            "tokens[0]: unknown key token_evn — did you mean token_env? (allowed: name, token_env, tools)",
        ),
        ("tokens:\n  - ci\n", "tokens[0]: must be a mapping of name, token_env, tools; got text"),
        (
            "tokens:\n  - name: ci\n    token_env: ARGENT_TOKEN_NOPE\n    tools: ['*']\n",
            "tokens[0].token_env: the environment variable ARGENT_TOKEN_NOPE is not set (or empty); set it to "
            "token 'ci' before starting the tool-server",
        ),
        (
            "tokens:\n  - name: ci\n    token_env: ARGENT_TOKEN_CI\n    tools: ['*']\n"
            "  - name: ci\n    token_env: ARGENT_TOKEN_DEV\n    tools: ['*']\n",
            "tokens[1].name: another token is already named 'ci'",
        ),
        (
            "tokens:\n  - name: ci\n    token_env: ARGENT_TOKEN_CI\n    tools: ['*']\n"
            "  - name: dev\n    token_env: ARGENT_TOKEN_CI\n    tools: ['*']\n",
            "tokens[1].token_env: ARGENT_TOKEN_CI holds the same token as another entry",
        ),
        (
            "tokens:\n  - name: ci\n    token_env: ARGENT_TOKEN_CI\n    tools: []\n",
            "tokens[0].tools: list the tool names or globs (e.g. flow-*) this token may call",
        ),
        ("project_roots: [relative/dir]\n", "project_roots[0]: 'relative/dir' must be an absolute path"),
        (
            "project_roots: [/etc]\n",
            "project_roots[0]: /etc is the filesystem root, the home directory or a system directory; name the directories that hold the projects",
        ),
        (
            "[1, 2]\n",
            "the file must be a mapping of settings (allowed keys: tokens, project_roots, local_flows, scripts, overwrite_flows, limits)",
        ),
        ("scripts: [\n", "not valid YAML"),
        ("scripts: true\nscripts: false\n", "not valid YAML"),
    ],
)
def test_a_bad_file_names_the_key_and_what_is_allowed(tmp_path: Path, text: str, message: str) -> None:
    assert refusal(tmp_path, text).startswith(message)


def test_every_problem_is_told_at_once(tmp_path: Path) -> None:
    message = refusal(tmp_path, "scripts: 1\nlocal_flows: 2\n")
    assert "scripts: must be true or false, got a number" in message
    assert "local_flows: must be true or false, got a number" in message


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    text = "tokens:\n  - name: ci\n    token_env: SHORT\n    tools: ['*']\n"
    assert refusal(tmp_path, text, {"SHORT": "abc"}).startswith(
        "tokens[0].token_env: the token in SHORT must be at least 16 characters"
    )


def test_a_missing_project_root_directory_and_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert (
        refusal(tmp_path, f"project_roots: [{missing}]\n")
        == f"project_roots[0]: {missing} is not a directory on this host"
    )
    with pytest.raises(PolicyFileError, match="cannot read the config file"):
        load_policy(str(tmp_path / "absent.yaml"), {})


def test_a_token_of_exactly_the_shortest_length_is_accepted_and_one_less_is_not(tmp_path: Path) -> None:
    text = "tokens:\n  - name: ci\n    token_env: EDGE\n    tools: ['*']\n"
    edge = "e" * MIN_TOKEN_CHARS
    policy = load_policy(config(tmp_path, text), {"EDGE": edge})
    assert policy.match(edge) is policy.tokens[0]
    assert refusal(tmp_path, text, {"EDGE": edge[1:]}).startswith(
        f"tokens[0].token_env: the token in EDGE must be at least {MIN_TOKEN_CHARS} characters"
    )


def test_every_limit_of_the_file_reaches_the_policy(tmp_path: Path) -> None:
    text = "limits:\n  concurrent_calls_per_token: 2\n  steps_per_call: 30\n  devices_per_token: 1\n  seconds_per_call: 7\n"
    policy = load_policy(config(tmp_path, text), {})
    assert (policy.concurrent_calls_per_token, policy.steps_per_call) == (2, 30)
    assert (policy.devices_per_token, policy.seconds_per_call) == (1, 7)
    assert policy.for_token(None).devices_per_token == 1  # and the rules of each call carry the device cap


def test_a_mapping_where_text_belongs_is_named_a_mapping(tmp_path: Path) -> None:
    assert refusal(tmp_path, "scripts: {yes: 1}\n").startswith(
        "scripts: must be true or false, got a mapping"
    )
