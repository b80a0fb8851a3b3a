"""A shared tool-server's policy: `argent server start --config FILE.yaml`.

The file (YAML, every part optional)::

    tokens:                      # named tokens; each token's value comes from the environment
      - name: ci
        token_env: ARGENT_TOKEN_CI
        tools: [flow-execute, flow-read-prerequisite]   # tool names or globs it may call
    project_roots: [/srv/projects]   # a co-located project_root must lie under one (by real path)
    local_flows: false               # flows only from the files a client sends (over a link)
    scripts: false                   # no script: step, no flow-add-script
    overwrite_flows: false           # with tokens: a token restarts only the saved flows it recorded
    limits:
      concurrent_calls_per_token: 4  # over it: 429 with Retry-After
      steps_per_call: 20000          # lines one call may report (see runner/budget.py)
      devices_per_token: 4           # Chromium devices one token may hold at once (over it: 429)
      seconds_per_call: 900          # longest one call runs (then it is aborted, naming the limit)

A file that does not fit is a usage error naming the file, the key and what is allowed. Without
``--config`` the server runs with ``ServerPolicy()``: one token, every tool, the unsafe
directories refused, the limits at their defaults.
"""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any, get_args, get_origin

import attrs
import cattrs
from attrs import field, frozen
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError
from cattrs.gen import make_dict_structure_fn

from argent.errors import PolicyRefusal
from argent.flows.grammar import did_you_mean
from argent.limits import (
    DEFAULT_CONCURRENT_CALLS_PER_TOKEN,
    DEFAULT_DEVICES_PER_TOKEN,
    DEFAULT_SECONDS_PER_CALL,
    MAX_BROWSER_DEVICES,
    MAX_STEPS_PER_CALL,
    MIN_TOKEN_CHARS,
)
from argent.tools.call_policy import CallPolicy
from argent.tools.workspace import check_workspace, unsafe_directories

TOKEN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PolicyFileError(Exception):
    """A --config file that cannot be used: the message names the file, the key and what is allowed."""


# --------------------------------------------------------------------------------------------
# The file, as written


@frozen
class TokenEntry:
    name: str
    token_env: str
    tools: tuple[str, ...]


@frozen
class LimitsEntry:
    concurrent_calls_per_token: int = DEFAULT_CONCURRENT_CALLS_PER_TOKEN
    steps_per_call: int = MAX_STEPS_PER_CALL
    devices_per_token: int = DEFAULT_DEVICES_PER_TOKEN
    seconds_per_call: int = DEFAULT_SECONDS_PER_CALL


@frozen
class PolicyFile:
    tokens: tuple[TokenEntry, ...] | None = None
    project_roots: tuple[str, ...] = ()
    local_flows: bool = True
    scripts: bool = True
    overwrite_flows: bool = False
    limits: LimitsEntry = LimitsEntry()


def _json_kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _is_tuple(kind: Any) -> bool:
    return bool(get_origin(kind) is tuple)


def _make_converter() -> cattrs.Converter:
    """Strict: YAML's text stays text, true/false stays a boolean, a list stays a list."""
    conv = cattrs.Converter(forbid_extra_keys=True)

    def text(value: Any, _: type) -> str:
        if not isinstance(value, str):
            raise TypeError(f"must be text, got {_json_kind(value)}")
        return value

    def boolean(value: Any, _: type) -> bool:
        if not isinstance(value, bool):
            raise TypeError(f"must be true or false, got {_json_kind(value)}")
        return value

    def whole(value: Any, _: type) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"must be a whole number, got {_json_kind(value)}")
        return value

    def sequence(value: Any, kind: Any) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise TypeError(f"must be a list, got {_json_kind(value)}")
        item = get_args(kind)[0]
        out, errors = [], []
        for index, entry in enumerate(value):
            try:
                out.append(conv.structure(entry, item))
            except Exception as exc:
                exc.__notes__ = [
                    *getattr(exc, "__notes__", []),
                    cattrs.IterableValidationNote("", index, item),
                ]
                errors.append(exc)
        if errors:
            raise IterableValidationError("invalid list", errors, kind)
        return tuple(out)

    def record(cls: type) -> Any:
        inner: Any = make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=True)

        def structure(value: Any, _: type) -> Any:
            if not isinstance(value, Mapping):
                keys = ", ".join(f.name for f in attrs.fields(cls))
                raise TypeError(f"must be a mapping of {keys}; got {_json_kind(value)}")
            return inner(value, cls)

        return structure

    conv.register_structure_hook(str, text)
    conv.register_structure_hook(bool, boolean)
    conv.register_structure_hook(int, whole)
    conv.register_structure_hook_func(_is_tuple, sequence)
    conv.register_structure_hook_factory(attrs.has, record)
    return conv


_CONVERTER = _make_converter()


def _where(path: list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _problems(exc: BaseException, path: list[str | int]) -> Iterator[str]:
    """One line per problem: ``<key path>: <what is wrong and what is allowed>``."""
    if isinstance(exc, ClassValidationError | IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for inner, note in with_notes:
            step = note.name if isinstance(note, cattrs.AttributeValidationNote) else note.index
            yield from _problems(inner, [*path, step])
        for inner in without:
            yield from _problems(inner, path)
    elif isinstance(exc, ForbiddenExtraKeysError):
        names = [f.name for f in attrs.fields(exc.cl)]
        extra = sorted(exc.extra_fields)
        hints = [f"{key} -> {hint}" for key in extra if (hint := did_you_mean(key, names)) is not None]
        guess = f" — did you mean {', '.join(hints)}?" if len(extra) > 1 and hints else ""
        if len(extra) == 1 and hints:
            guess = f" — did you mean {hints[0].split(' -> ')[1]}?"
        where = f"{_where(path)}: " if path else ""
        yield f"{where}unknown key {', '.join(extra)}{guess} (allowed: {', '.join(names)})"
    elif isinstance(exc, KeyError):
        yield f"{_where(path)}: is required"
    else:
        yield f"{_where(path) or 'the file'}: {exc}"


# --------------------------------------------------------------------------------------------
# The policy, as the server applies it


@frozen
class TokenRule:
    """A named token: its secret, and the tool names or globs it may call."""

    name: str
    token: str = field(repr=False)
    tools: tuple[str, ...]

    @property
    def guard(self) -> str:
        return f"token:{self.name}"


@frozen
class ServerPolicy:
    tokens: tuple[TokenRule, ...] = ()
    #: Real paths.
    project_roots: tuple[str, ...] = ()
    local_flows: bool = True
    scripts: bool = True
    concurrent_calls_per_token: int = DEFAULT_CONCURRENT_CALLS_PER_TOKEN
    #: Lines one flow-execute call may report, its fragments and nested runs included.
    steps_per_call: int = MAX_STEPS_PER_CALL
    #: Chromium devices one token may hold at once.
    devices_per_token: int = DEFAULT_DEVICES_PER_TOKEN
    #: Longest one call runs before it is aborted.
    seconds_per_call: int = DEFAULT_SECONDS_PER_CALL
    #: With named tokens: may any token restart (truncate) a saved flow another token recorded?
    overwrite_flows: bool = False
    #: The unsafe directories, fixed when the server starts (``$HOME`` as it was then).
    unsafe: Mapping[str, str] = field(factory=unsafe_directories, repr=False)

    def match(self, given: str) -> TokenRule | None:
        """The named token ``given`` is (every token compared in constant time)."""
        found = None
        for rule in self.tokens:
            # surrogateescape: a header of non-UTF-8 bytes compares (and fails) like any other.
            if hmac.compare_digest(given.encode("utf-8", "surrogateescape"), rule.token.encode()):
                found = rule
        return found

    def for_token(self, rule: TokenRule | None) -> CallPolicy:
        """The rules of a call made with ``rule`` (None: the server's one token, or no auth)."""
        return CallPolicy(
            unsafe=self.unsafe,
            project_roots=self.project_roots,
            local_flows=self.local_flows,
            scripts=self.scripts,
            guard=rule.guard if rule is not None else None,
            tools=rule.tools if rule is not None else None,
            devices_per_token=self.devices_per_token,
            overwrite_flows=self.overwrite_flows,
        )


def _read_yaml(path: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise PolicyFileError(f"cannot read the config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PolicyFileError(f"{path}: the config file is not UTF-8 text") from None
    try:
        return YAML(typ="safe", pure=True).load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise PolicyFileError(f"{path}: not valid YAML{where}: {exc.problem or exc}") from None
    except YAMLError as exc:
        raise PolicyFileError(f"{path}: not valid YAML: {exc}") from None


def _tokens(path: str, entries: tuple[TokenEntry, ...], environ: Mapping[str, str]) -> tuple[TokenRule, ...]:
    if not entries:
        raise PolicyFileError(f"{path}: tokens: name at least one token, or leave tokens out")
    rules: list[TokenRule] = []
    for index, entry in enumerate(entries):
        where = f"{path}: tokens[{index}]"
        if not TOKEN_NAME_RE.match(entry.name):
            raise PolicyFileError(
                f"{where}.name: {entry.name!r} is not a token name (letters, digits, '_', '.', '-')"
            )
        if any(rule.name == entry.name for rule in rules):
            raise PolicyFileError(f"{where}.name: another token is already named {entry.name!r}")
        if not ENV_NAME_RE.match(entry.token_env):
            raise PolicyFileError(
                f"{where}.token_env: {entry.token_env!r} is not an environment variable name"
            )
        token = environ.get(entry.token_env, "")
        if not token:
            raise PolicyFileError(
                f"{where}.token_env: the environment variable {entry.token_env} is not set (or empty); "
                f"set it to token {entry.name!r} before starting the tool-server"
            )
        if len(token) < MIN_TOKEN_CHARS or token != token.strip():
            raise PolicyFileError(
                f"{where}.token_env: the token in {entry.token_env} must be at least {MIN_TOKEN_CHARS} "
                "characters without surrounding spaces (e.g. `openssl rand -hex 32`)"
            )
        if any(rule.token == token for rule in rules):
            raise PolicyFileError(
                f"{where}.token_env: {entry.token_env} holds the same token as another entry"
            )
        if not entry.tools or any(not glob.strip() for glob in entry.tools):
            raise PolicyFileError(
                f"{where}.tools: list the tool names or globs (e.g. flow-*) this token may call"
            )
        rules.append(TokenRule(name=entry.name, token=token, tools=entry.tools))
    return tuple(rules)


def _project_roots(path: str, roots: tuple[str, ...], unsafe: Mapping[str, str]) -> tuple[str, ...]:
    out: list[str] = []
    for index, root in enumerate(roots):
        where = f"{path}: project_roots[{index}]"
        if not os.path.isabs(root):
            raise PolicyFileError(f"{where}: {root!r} must be an absolute path")
        if not os.path.isdir(root):
            raise PolicyFileError(f"{where}: {root} is not a directory on this host")
        try:
            check_workspace(root, unsafe, ())
        except PolicyRefusal:
            raise PolicyFileError(
                f"{where}: {root} is the filesystem root, the home directory or a system directory; "
                "name the directories that hold the projects"
            ) from None
        out.append(os.path.realpath(root))
    return tuple(out)


def load_policy(path: str, environ: Mapping[str, str] | None = None) -> ServerPolicy:
    """The policy of a --config file; ``PolicyFileError`` says what is wrong where."""
    env = os.environ if environ is None else environ
    data = _read_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        allowed = ", ".join(f.name for f in attrs.fields(PolicyFile))
        raise PolicyFileError(f"{path}: the file must be a mapping of settings (allowed keys: {allowed})")
    try:
        parsed = _CONVERTER.structure(data, PolicyFile)
    except Exception as exc:
        problems = list(_problems(exc, []))
        raise PolicyFileError(f"{path}: " + f"\n{path}: ".join(problems)) from None
    for key in ("concurrent_calls_per_token", "steps_per_call", "devices_per_token", "seconds_per_call"):
        value = getattr(parsed.limits, key)
        if value < 1:
            raise PolicyFileError(f"{path}: limits.{key}: must be at least 1, got {value}")
    if parsed.limits.devices_per_token > MAX_BROWSER_DEVICES:
        raise PolicyFileError(
            f"{path}: limits.devices_per_token: at most {MAX_BROWSER_DEVICES} (the devices the tool-server "
            f"runs at once), got {parsed.limits.devices_per_token}"
        )
    unsafe = unsafe_directories()
    return ServerPolicy(
        tokens=_tokens(path, parsed.tokens, env) if parsed.tokens is not None else (),
        project_roots=_project_roots(path, parsed.project_roots, unsafe),
        local_flows=parsed.local_flows,
        scripts=parsed.scripts,
        overwrite_flows=parsed.overwrite_flows,
        concurrent_calls_per_token=parsed.limits.concurrent_calls_per_token,
        steps_per_call=parsed.limits.steps_per_call,
        devices_per_token=parsed.limits.devices_per_token,
        seconds_per_call=parsed.limits.seconds_per_call,
        unsafe=unsafe,
    )
