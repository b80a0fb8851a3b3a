"""``{{secret:NAME}}``: text-entry placeholders filled from the tool-server's environment.

One home for the placeholder, used by a flow's ``type:`` step and by the ``keyboard`` tool, so
both accept the same spellings and refuse an unknown name with the same message. A value is
typed, never echoed: callers redact the values ``fill_secrets`` returns from any message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from argent.errors import InvalidToolInputError

SECRET_ENV_PREFIX = "ARGENT_SECRET_"
#: Everything between the braces is the name (stripped), so a misspelt name is refused, never
#: typed as literal text.
_PLACEHOLDER = re.compile(r"\{\{secret:([^{}]*)\}\}")

__all__ = ["SECRET_ENV_PREFIX", "UnknownSecretError", "available_secrets", "fill_secrets", "redact"]


class UnknownSecretError(InvalidToolInputError):
    """A placeholder names a secret the tool-server's environment does not define."""

    def __init__(self, name: str, available: list[str]) -> None:
        self.name = name
        self.variable = SECRET_ENV_PREFIX + name
        names = ", ".join(available) or "(none)"
        super().__init__(
            f'Unknown secret "{name}" — no source on the machine running the tool-server defines {name}. '
            f"Available secrets: {names}. Set {self.variable} in the tool-server's environment "
            "before starting it."
        )


def available_secrets(env: Mapping[str, str]) -> list[str]:
    """The secret names ``env`` defines (never their values), sorted."""
    return sorted(
        k[len(SECRET_ENV_PREFIX) :]
        for k in env
        if k.startswith(SECRET_ENV_PREFIX) and len(k) > len(SECRET_ENV_PREFIX)
    )


def _lookup(name: str, env: Mapping[str, str]) -> str | None:
    value = env.get(SECRET_ENV_PREFIX + name) if name else None
    if value is None and name.upper().startswith(SECRET_ENV_PREFIX):  # the variable's whole name
        value = env.get(SECRET_ENV_PREFIX + name[len(SECRET_ENV_PREFIX) :])
    return value


def fill_secrets(text: str, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """``text`` with each ``{{secret:NAME}}`` replaced by ``ARGENT_SECRET_<NAME>``, and the values
    used (one per placeholder). Raises ``UnknownSecretError`` (a 400 for a tool) naming the name,
    never a value, when one is not set."""
    values: list[str] = []

    def fill(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        value = _lookup(name, env)
        if value is None:
            raise UnknownSecretError(name, available_secrets(env))
        values.append(value)
        return value

    return _PLACEHOLDER.sub(fill, text), values


def redact(message: str, secrets: list[str]) -> str:
    """``message`` with every secret value replaced by ``[secret]`` (the longest first)."""
    for value in sorted(set(secrets), key=len, reverse=True):
        if value:
            message = message.replace(value, "[secret]")
    return message
