"""`{{secret:NAME}}` has one home (argent.flows.secrets): a flow's `type:` and the keyboard tool fill it
the same way and refuse an unknown name with the same message."""

from __future__ import annotations

import pytest

from argent.errors import InvalidToolInputError
from argent.flows import secrets
from argent.flows.secrets import UnknownSecretError, available_secrets, fill_secrets, redact
from argent.runner import directives
from argent.tools.device_tools import gestures

ENV = {"ARGENT_SECRET_PW": "hunter2", "ARGENT_SECRET_TOKEN": "t0k", "ARGENT_SECRET_": "x", "HOME": "/h"}


def test_both_callers_use_the_one_module() -> None:
    assert directives.fill_secrets is secrets.fill_secrets and directives.redact is secrets.redact
    assert gestures.fill_secrets is secrets.fill_secrets
    assert not hasattr(directives, "SECRET_ENV_PREFIX") and not hasattr(directives, "_SECRET")


def test_fills_every_placeholder_and_returns_the_values_used() -> None:
    assert fill_secrets("u={{secret:PW}}&t={{secret: TOKEN }}", ENV) == (
        "u=hunter2&t=t0k",
        ["hunter2", "t0k"],
    )
    assert fill_secrets("{{secret:ARGENT_SECRET_PW}}", ENV) == ("hunter2", ["hunter2"])  # the variable's name
    assert fill_secrets("no placeholder {{secret}}", ENV) == ("no placeholder {{secret}}", [])


@pytest.mark.parametrize("text", ["{{secret:NOPE}}", "{{secret:pw-1}}", "{{secret:}}", "a {{secret:pw}}"])
def test_an_unknown_or_misspelt_name_is_refused_never_typed_literally(text: str) -> None:
    with pytest.raises(UnknownSecretError) as caught:
        fill_secrets(text, ENV)
    error = caught.value
    assert isinstance(error, InvalidToolInputError) and error.status == 400
    assert (
        f'Unknown secret "{error.name}"' in error.message and f"ARGENT_SECRET_{error.name}" in error.message
    )
    assert "Available secrets: PW, TOKEN." in error.message
    assert "hunter2" not in error.message and "t0k" not in error.message


def test_no_secret_defined_says_none() -> None:
    with pytest.raises(UnknownSecretError, match=r"Available secrets: \(none\)\."):
        fill_secrets("{{secret:X}}", {})
    assert available_secrets(ENV) == ["PW", "TOKEN"]


def test_redact_replaces_the_longest_value_first_and_skips_empty_ones() -> None:
    assert redact("pw=abcd, part=ab", ["ab", "abcd", ""]) == "pw=[secret], part=[secret]"
    assert redact("nothing", [""]) == "nothing"
