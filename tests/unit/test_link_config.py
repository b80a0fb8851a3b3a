"""link.json, link strings, routing precedence, and the offline parts of `argent link` / `argent unlink`."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from argent.cli.main import cli
from argent.client.link_config import (
    LinkConfig,
    LinkTarget,
    format_argent_url,
    link_config_path,
    parse_argent_url,
    parse_link_target,
    read_link_config,
    write_link_config,
)
from argent.client.routing import resolve_route


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ARGENT_TOOLS_URL", raising=False)
    monkeypatch.delenv("ARGENT_AUTH_TOKEN", raising=False)
    return tmp_path


def _config(token: str | None = "s3cret") -> LinkConfig:
    return LinkConfig(
        url="http://10.0.0.42:3001",
        host="10.0.0.42",
        port=3001,
        created_at="2025-01-02T03:04:05.000Z",
        token=token,
    )


def _write_raw(home: Path, content: str) -> Path:
    path = home / ".argent" / "link.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


# --------------------------------------------------------------------------------------------------
# link.json


def test_round_trip_creates_the_directory_and_writes_pretty_json_with_a_trailing_newline(home: Path) -> None:
    assert not (home / ".argent").exists()
    path = write_link_config(_config())
    assert path == home / ".argent" / "link.json" == link_config_path()
    text = path.read_text()
    assert text.endswith("}\n")
    assert text == json.dumps(json.loads(text), indent=2) + "\n"
    assert json.loads(text) == {
        "url": "http://10.0.0.42:3001",
        "host": "10.0.0.42",
        "port": 3001,
        "createdAt": "2025-01-02T03:04:05.000Z",
        "token": "s3cret",
    }
    assert read_link_config() == _config()


def test_a_tokenless_link_round_trips_without_a_token_key(home: Path) -> None:
    path = write_link_config(_config(token=None))
    assert "token" not in json.loads(path.read_text())
    assert read_link_config() == _config(token=None)


def test_the_file_mode_is_forced_to_0600_even_over_a_readable_file(home: Path) -> None:
    path = _write_raw(home, "{}")
    os.chmod(path, 0o644)
    write_link_config(_config())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[1, 2]",
        '{"host": "h", "port": 1, "createdAt": "t"}',
        '{"url": "http://h:1", "port": 1, "createdAt": "t"}',
        '{"url": "http://h:1", "host": "h", "createdAt": "t"}',
        '{"url": "http://h:1", "host": "h", "port": 1}',
        '{"url": 5, "host": "h", "port": 1, "createdAt": "t"}',
        '{"url": "http://h:1", "host": "h", "port": "1", "createdAt": "t"}',
        '{"url": "http://h:1", "host": "h", "port": true, "createdAt": "t"}',
        '{"url": "http://h:1", "host": "h", "port": 1, "createdAt": 7}',
    ],
)
def test_an_invalid_link_file_counts_as_no_link(home: Path, content: str) -> None:
    _write_raw(home, content)
    assert read_link_config() is None


def test_a_missing_link_file_is_no_link(home: Path) -> None:
    assert read_link_config() is None


def test_a_token_that_is_not_a_string_is_dropped(home: Path) -> None:
    _write_raw(home, '{"url": "http://h:1", "host": "h", "port": 1, "createdAt": "t", "token": 42}')
    config = read_link_config()
    assert config is not None and config.token is None


# --------------------------------------------------------------------------------------------------
# Routing precedence


def test_no_env_and_no_link_routes_to_an_embedded_tool_server(home: Path) -> None:
    route = resolve_route()
    assert (route.url, route.token, route.source, route.linked) == (None, None, "embedded", False)


def test_a_valid_link_routes_there_with_its_token(home: Path) -> None:
    write_link_config(_config())
    route = resolve_route()
    assert (route.url, route.token, route.source, route.linked) == (
        "http://10.0.0.42:3001",
        "s3cret",
        "link",
        True,
    )
    assert route.shadowed_link is None


def test_the_env_url_wins_with_the_env_token_and_reports_the_shadowed_link(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_link_config(_config())
    monkeypatch.setenv("ARGENT_TOOLS_URL", "http://127.0.0.1:4000")
    monkeypatch.setenv("ARGENT_AUTH_TOKEN", "envtok")
    route = resolve_route()
    assert (route.url, route.token, route.source, route.linked) == (
        "http://127.0.0.1:4000",
        "envtok",
        "env",
        True,
    )
    assert route.shadowed_link == _config()


def test_the_env_url_without_a_link_has_no_shadowed_link_and_no_token(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARGENT_TOOLS_URL", "http://127.0.0.1:4000")
    route = resolve_route()
    assert (route.source, route.token, route.shadowed_link) == ("env", None, None)


def test_an_empty_env_url_is_ignored(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_link_config(_config())
    monkeypatch.setenv("ARGENT_TOOLS_URL", "")
    monkeypatch.setenv("ARGENT_AUTH_TOKEN", "envtok")
    route = resolve_route()
    assert (route.source, route.token) == ("link", "s3cret")


def test_a_corrupt_link_is_never_used(home: Path) -> None:
    _write_raw(home, '{"url": "http://h:1", "host": "h"')
    assert resolve_route().source == "embedded"


def test_resolve_route_reads_an_explicit_environment_and_home(tmp_path: Path) -> None:
    write_link_config(_config(), tmp_path / ".argent" / "link.json")
    assert resolve_route({}, home=tmp_path).source == "link"
    route = resolve_route({"ARGENT_TOOLS_URL": "http://x:1", "ARGENT_AUTH_TOKEN": "t"}, home=tmp_path)
    assert (route.url, route.token, route.source) == ("http://x:1", "t", "env")


# --------------------------------------------------------------------------------------------------
# Link strings


def test_format_argent_url_with_and_without_a_token() -> None:
    assert format_argent_url("10.0.0.42", 3001, "s3cret") == "argent://s3cret@10.0.0.42:3001"
    assert format_argent_url("10.0.0.42", 3001) == "argent://10.0.0.42:3001"


def test_format_argent_url_brackets_ipv6_and_encodes_the_token() -> None:
    assert format_argent_url("::1", 3001, "a/b@c") == "argent://a%2Fb%40c@[::1]:3001"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("argent://s3cret@10.0.0.42:3001", LinkTarget("http://10.0.0.42:3001", "10.0.0.42", 3001, "s3cret")),
        ("argent://10.0.0.42:3001", LinkTarget("http://10.0.0.42:3001", "10.0.0.42", 3001, None)),
        ("argent://tok@[::1]:3001", LinkTarget("http://[::1]:3001", "::1", 3001, "tok")),
        ("argent://a%2Fb%40c@host:1", LinkTarget("http://host:1", "host", 1, "a/b@c")),
    ],
)
def test_parse_argent_url(text: str, expected: LinkTarget) -> None:
    assert parse_argent_url(text) == expected
    assert parse_link_target(text) == expected


def test_argent_url_format_and_parse_round_trip() -> None:
    for host, token in (("10.0.0.42", "t0k"), ("::1", None), ("example.com", "a b/c")):
        parsed = parse_argent_url(format_argent_url(host, 3001, token))
        assert parsed is not None
        assert (parsed.host, parsed.port, parsed.token) == (host, 3001, token)


@pytest.mark.parametrize("text", ["argent://host", "argent://tok@host", "argent://[::1]", "argent://:3001"])
def test_an_argent_url_without_host_or_port_raises(text: str) -> None:
    with pytest.raises(ValueError, match="needs a host and a port"):
        parse_argent_url(text)


def test_an_argent_url_with_a_bad_port_raises() -> None:
    with pytest.raises(ValueError, match="port"):
        parse_argent_url("argent://host:99999")


def test_parse_argent_url_ignores_other_schemes() -> None:
    assert parse_argent_url("http://host:1") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "https://tools.example.com",
            LinkTarget("https://tools.example.com", "tools.example.com", 443, None),
        ),
        ("http://tools.example.com", LinkTarget("http://tools.example.com", "tools.example.com", 80, None)),
        ("http://10.0.0.1:3001", LinkTarget("http://10.0.0.1:3001", "10.0.0.1", 3001, None)),
        (
            "https://tools.example.com/argent/api///",
            LinkTarget("https://tools.example.com/argent/api", "tools.example.com", 443, None),
        ),
        (
            "https://tok@tools.example.com:8443/x",
            LinkTarget("https://tools.example.com:8443/x", "tools.example.com", 8443, "tok"),
        ),
        ("https://h.example/p?q=1#frag", LinkTarget("https://h.example/p", "h.example", 443, None)),
        ("http://[::1]:3001/", LinkTarget("http://[::1]:3001", "::1", 3001, None)),
        ("https://[fe80::1]", LinkTarget("https://[fe80::1]", "fe80::1", 443, None)),
    ],
)
def test_parse_link_target_http_urls(text: str, expected: LinkTarget) -> None:
    assert parse_link_target(text) == expected


@pytest.mark.parametrize("text", ["tools.example.com", "10.0.0.1:3001", "ftp://host:21", "http://", ""])
def test_parse_link_target_refuses_anything_else(text: str) -> None:
    assert parse_link_target(text) is None


# --------------------------------------------------------------------------------------------------
# `argent link` / `argent unlink` without a network


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_link_no_verify_writes_the_link_and_show_never_prints_the_token(home: Path) -> None:
    code, out, err = _run("link", "argent://hunter2@10.0.0.42:3001", "--no-verify")
    assert code == 0, out + err
    config = read_link_config()
    assert config is not None
    assert (config.url, config.host, config.port, config.token) == (
        "http://10.0.0.42:3001",
        "10.0.0.42",
        3001,
        "hunter2",
    )
    assert "hunter2" not in out + err
    code, out, err = _run("link", "--show")
    assert code == 0
    assert "http://10.0.0.42:3001" in out and "a token is stored" in out
    assert "hunter2" not in out + err


def test_link_warns_about_plain_http_to_a_remote_host(home: Path) -> None:
    _code, _out, err = _run("link", "argent://t@10.0.0.42:3001", "--no-verify")
    assert "plain http" in err
    _code, _out, err = _run("link", "argent://t@127.0.0.1:3001", "--no-verify")
    assert "plain http" not in err


def test_link_warns_when_no_token_is_stored(home: Path) -> None:
    code, _out, err = _run("link", "https://tools.example.com", "--no-verify")
    assert code == 0
    assert "no token is stored" in err
    code, _out, err = _run("link", "https://tools.example.com", "--token", "t", "--no-verify")
    assert code == 0 and "no token" not in err
    config = read_link_config()
    assert config is not None and config.token == "t"


def test_the_token_option_overrides_the_target_token(home: Path) -> None:
    _run("link", "argent://fromurl@10.0.0.42:3001", "--token", "fromflag", "--no-verify")
    config = read_link_config()
    assert config is not None and config.token == "fromflag"


def test_relinking_the_same_server_keeps_its_stored_token(home: Path) -> None:
    _run("link", "argent://keep@10.0.0.42:3001", "--no-verify")
    code, _out, err = _run("link", "argent://10.0.0.42:3001", "--no-verify")
    assert code == 0
    config = read_link_config()
    assert config is not None and config.token == "keep"
    assert "Keeping the token" in err
    _run("link", "argent://10.0.0.43:3001", "--no-verify")
    config = read_link_config()
    assert config is not None and config.token is None


@pytest.mark.parametrize("target", ["argent://t@0.0.0.0:3001", "argent://t@[::]:3001", "http://0.0.0.0:3001"])
def test_link_refuses_wildcard_hosts(home: Path, target: str) -> None:
    code, _out, err = _run("link", target, "--no-verify")
    assert code == 2
    assert "wildcard" in err
    assert read_link_config() is None


def test_link_refuses_port_zero(home: Path) -> None:
    code, _out, err = _run("link", "argent://t@127.0.0.1:0", "--no-verify")
    assert code == 2 and "port 0" in err
    assert read_link_config() is None


@pytest.mark.parametrize(
    ("target", "needle"), [("ftp://h:1", "Not a link target"), ("argent://h", "host and a port")]
)
def test_link_refuses_what_is_not_a_target(home: Path, target: str, needle: str) -> None:
    code, _out, err = _run("link", target, "--no-verify")
    assert code == 2 and needle in err


def test_link_without_a_target_is_a_usage_problem(home: Path) -> None:
    code, _out, err = _run("link")
    assert code == 2 and "argent link argent://" in err


def test_link_notes_when_the_env_url_shadows_it(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGENT_TOOLS_URL", "http://127.0.0.1:9999")
    code, _out, err = _run("link", "argent://t@127.0.0.1:3001", "--no-verify")
    assert code == 0
    assert "ARGENT_TOOLS_URL is set (http://127.0.0.1:9999)" in err


def test_show_without_a_link(home: Path) -> None:
    code, out, _err = _run("link", "--show")
    assert code == 0 and "Not linked" in out


def test_unlink_removes_the_link_and_is_a_no_op_without_one(home: Path) -> None:
    _run("link", "argent://t@10.0.0.42:3001", "--no-verify")
    code, out, _err = _run("unlink")
    assert code == 0 and "Unlinked from http://10.0.0.42:3001" in out
    assert not link_config_path().exists()
    assert resolve_route().source == "embedded"
    code, out, _err = _run("unlink")
    assert code == 0 and "nothing to remove" in out
