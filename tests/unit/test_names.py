"""Flow names, baseline keys, fragment display names and the step/selector/condition labels."""

from __future__ import annotations

import pytest

from argent.errors import FlowError
from argent.flows.model import (
    AssertStep,
    AwaitStep,
    Condition,
    EchoStep,
    IdleStep,
    LaunchStep,
    LongPressStep,
    PinchStep,
    PlatformGuard,
    Point,
    RotateStep,
    RunStep,
    ScriptStep,
    ScrollToStep,
    Selector,
    SnapshotStep,
    Step,
    TapStep,
    ToolStep,
    TypeStep,
    WaitStep,
    WhenStep,
)
from argent.flows.names import (
    FLOW_FILE_NAME_RE,
    FLOW_NAME_RE,
    assert_safe_flow_name,
    baseline_key,
    condition_label,
    describe_selector,
    fragment_display_name,
    is_safe_flow_name,
    js_json,
    js_number,
    js_string,
    selector_label,
    step_target_label,
)
from argent.flows.parse import parse_flow


@pytest.mark.parametrize("name", ["checkout", "a", "Login_2", "my-flow", "123", "A-b_C"])
def test_safe_flow_names(name: str) -> None:
    assert is_safe_flow_name(name)
    assert FLOW_NAME_RE.match(name)
    assert_safe_flow_name(name)


@pytest.mark.parametrize(
    "name", ["", "..", ".", "a/b", "a\\b", "my flow", "flow.yaml", "flow\n", "naïve", "a:b", "-\n-"]
)
def test_unsafe_flow_names(name: str) -> None:
    assert not is_safe_flow_name(name)
    with pytest.raises(FlowError) as info:
        assert_safe_flow_name(name)
    assert info.value.error_code == "FLOW_NAME_INVALID"
    assert info.value.message == (
        f'Invalid flow name "{name}". Flow names must match /^[A-Za-z0-9_-]+$/ (letters, digits, underscore, '
        'hyphen — no path separators, no "..", no spaces).'
    )


def test_non_string_is_not_a_safe_name() -> None:
    assert not is_safe_flow_name(None)
    assert not is_safe_flow_name(42)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("login.yaml", True),
        ("a-b_c.yaml", True),
        ("login.YAML", False),
        ("login.yml", False),
        (".yaml", False),
        ("my flow.yaml", False),
        ("login.yaml\n", False),
        ("sub/login.yaml", False),
    ],
)
def test_flow_file_name_pattern(name: str, ok: bool) -> None:
    assert (FLOW_FILE_NAME_RE.match(name) is not None) is ok


@pytest.mark.parametrize(
    ("path", "written", "key"),
    [
        ("/p/.argent/flows/checkout.yaml", "checkout", "checkout"),
        ("/vault/real-flow.yaml", "alias", "real-flow"),
        ("/vault/weird name.yaml", "alias", "alias"),
        ("/vault/....yaml", "dots", "dots"),
        ("/vault/.yaml", "x", "x"),
    ],
)
def test_baseline_key(path: str, written: str, key: str) -> None:
    assert baseline_key(path, written) == key


@pytest.mark.parametrize(
    ("target", "root", "display"),
    [
        ("login.yaml", "checkout", "login"),
        ("helpers/login.yaml", "checkout", "login"),
        ("helpers/login.yaml", "login", "helpers/login"),
        ("login.yaml", "login", "./login"),
        ("../a.yaml", "a", "../a"),
        ("sub/b.yaml", "a", "b"),
    ],
)
def test_fragment_display_name(target: str, root: str, display: str) -> None:
    assert fragment_display_name(target, root) == display


# --------------------------------------------------------------------------------------------
# JavaScript formatting


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (0.5, "0.5"),
        (-2.25, "-2.25"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-10, "1.5e-10"),
        (2.5e30, "2.5e+30"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (float("nan"), "NaN"),
        (2**60, "1152921504606847000"),  # beyond 2**53 JavaScript prints the double
        (12345, "12345"),
        (0.1 + 0.2, "0.30000000000000004"),
    ],
)
def test_js_number(value: float, text: str) -> None:
    assert js_number(value) == text


def test_js_json_is_compact_like_json_stringify() -> None:
    data = {"a": [1, 2.5, None, True, float("inf")], "é": 'say "hi"\n', "n": 1.0}
    assert js_json(data) == '{"a":[1,2.5,null,true,null],"é":"say \\"hi\\"\\n","n":1}'


def test_js_string() -> None:
    assert js_string(None) == "null"
    assert js_string(True) == "true"
    assert js_string([1, [2, None], "x"]) == "1,2,,x"
    assert js_string({"a": 1}) == "[object Object]"
    assert js_string(1.0) == "1"


# --------------------------------------------------------------------------------------------
# labels


def test_selector_labels() -> None:
    assert selector_label(Selector(text="Clear logs", loose=True)) == '"Clear logs"'
    assert selector_label(Selector(identifier="total")) == "id=total"
    assert selector_label(Selector(role="button")) == "role=button"
    assert selector_label(Selector(text_matches="^Order")) == "/^Order/"
    nested = Selector(
        text="Buy",
        within=Selector(identifier="card"),
        after=Selector(text="Header", loose=True),
        next=Selector(role="button"),
    )
    assert selector_label(nested) == '"Buy" within (id=card) after ("Header") next (role=button)'
    assert selector_label(Selector(any=True, within=Selector(identifier="list"))) == "* within (id=list)"


def test_describe_selector() -> None:
    assert describe_selector(Selector(text="What's new", loose=True)) == 'text="What\'s new"'
    assert describe_selector(Selector(identifier="banner", role="alert")) == 'id="banner" role="alert"'
    assert describe_selector(Selector(text_matches=r"\d+")) == r"text=/\d+/"
    assert describe_selector(Selector(any=True, within=Selector(text="List"))) == '* within (text="List")'


def test_condition_labels() -> None:
    visible = Condition(kind="visible", selector=Selector(text="What's new", loose=True))
    assert condition_label(visible) == 'visible text="What\'s new"'
    contains = Condition(
        kind="text", selector=Selector(identifier="banner"), mode="contains", expected="Sale"
    )
    assert condition_label(contains) == 'id="banner" contains "Sale"'
    matches = Condition(kind="text", selector=Selector(identifier="n"), mode="matches", expected="^[0-9]+$")
    assert condition_label(matches) == 'id="n" matches /^[0-9]+$/'
    assert condition_label(PlatformGuard(platform="ios")) == "platform ios"


LOOSE = Selector(text="Nested touchables", loose=True)


@pytest.mark.parametrize(
    ("step", "label"),
    [
        (TapStep(target=Selector(text="Clear logs", loose=True)), '"Clear logs"'),
        (TapStep(target=Point(0.5, 0.25)), "(0.5, 0.25)"),
        (LongPressStep(target=Point(1.0, 0.0)), "(1, 0)"),
        (
            AssertStep(
                condition=Condition(kind="hidden", selector=Selector(text="] outer Touchable", loose=True))
            ),
            'hidden "] outer Touchable"',
        ),
        (
            AwaitStep(
                condition=Condition(
                    kind="text", selector=Selector(identifier="total"), mode="contains", expected="Total"
                )
            ),
            'id=total contains "Total"',
        ),
        (
            AssertStep(
                condition=Condition(
                    kind="text", selector=Selector(identifier="t"), mode="matches", expected="^a"
                )
            ),
            "id=t matches /^a/",
        ),
        (ScrollToStep(target=LOOSE, direction="up"), '"Nested touchables" (up)'),
        (ScrollToStep(target=LOOSE), '"Nested touchables"'),
        (TypeStep(into=Selector(identifier="email"), text="x"), "into id=email"),
        (SnapshotStep(name="home"), '"home"'),
        (SnapshotStep(name="home", crop_on=Selector(identifier="hdr")), '"home" cropOn id=hdr'),
        (WhenStep(guard=PlatformGuard(platform="ios"), steps=(EchoStep("x"),)), "platform ios"),
        (
            WhenStep(
                guard=Condition(kind="visible", selector=Selector(text="Banner", loose=True)),
                steps=(EchoStep("x"),),
            ),
            'visible "Banner"',
        ),
        (PinchStep(scale=2, on=Selector(text="Map", loose=True)), '"Map" (scale 2)'),
        (PinchStep(scale=0.5), "scale 0.5"),
        (RotateStep(by=-90, on=Selector(identifier="map")), "id=map (by -90°)"),
        (RotateStep(by=45.5), "by 45.5°"),
        (RunStep(target="helpers/login.yaml"), "helpers/login.yaml"),
        (ScriptStep(path="scripts/seed.py"), "scripts/seed.py"),
        (EchoStep("hi"), None),
        (ToolStep(tool="screenshot"), None),
        (LaunchStep(app="com.acme"), None),
        (WaitStep(ms=5), None),
        (IdleStep(), None),
    ],
)
def test_step_target_labels(step: Step, label: str | None) -> None:
    assert step_target_label(step) == label


def test_labels_of_parsed_steps() -> None:
    flow = parse_flow("steps:\n  - tap: { on: { id: row, within: List }, times: 2 }\n  - scroll-to: Footer\n")
    assert [step_target_label(step) for step in flow.steps] == ['id=row within ("List")', '"Footer"']


def test_css_labels() -> None:
    sel = Selector(css='a[href="/x"]', within=Selector(role="dialog"))
    assert selector_label(sel) == 'css=a[href="/x"] within (role=dialog)'
    assert describe_selector(sel) == 'css="a[href=\\"/x\\"]" within (role="dialog")'


def test_the_link_spells_a_flow_file_name_as_the_language_does() -> None:
    """``addressable`` of a case-folded spelling (``argent.link.paths``) follows the flow-name rule."""
    from argent.link.paths import FLOW_FILE_NAME_RE as LINK_FLOW_FILE_NAME_RE

    assert LINK_FLOW_FILE_NAME_RE.pattern == FLOW_FILE_NAME_RE.pattern
    assert LINK_FLOW_FILE_NAME_RE.flags == FLOW_FILE_NAME_RE.flags
