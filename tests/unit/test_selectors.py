"""The selector engine over hand-built UI trees."""

from __future__ import annotations

from typing import Any

from argent.devices.base import Frame, UiNode, UiTree
from argent.flows.model import Condition, Selector
from argent.limits import MISS_CANDIDATE_CHARS, MISS_CANDIDATES_EXAMINED
from argent.runner.selectors import (
    PASSWORD_LABEL,
    alternatives,
    best_match,
    css_selectors,
    evaluate,
    flatten,
    follows,
    inside,
    matches_for_condition,
    miss_reason,
    no_match_reason,
    off_screen_reason,
)
from argent.runner.teach import plural


def n(role: str, x: float, y: float, w: float, h: float, *children: UiNode, **kw: Any) -> UiNode:
    return UiNode(role=role, frame=Frame(x, y, w, h), children=tuple(children), **kw)


def screen(*children: UiNode, truncated: bool = False) -> Any:
    return flatten(UiTree(root=n("html", 0, 0, 1, 1, *children), truncated=truncated))


def labels(leaves: list[Any]) -> list[str]:
    return [leaf.label or leaf.value or leaf.identifier for leaf in leaves]


def loose(text: str, **kw: Any) -> Selector:
    return Selector(text=text, loose=True, **kw)


# --------------------------------------------------------------------------------------------
# Flattening


def test_root_is_never_a_leaf_and_unnamed_wrappers_are_dropped() -> None:
    s = screen(n("div", 0, 0, 1, 0.5, n("button", 0.1, 0.1, 0.2, 0.1, label="Save")))
    assert [leaf.role for leaf in s.leaves] == ["button"]
    assert s.leaves[0].order == 0


def test_subtree_text_is_hoisted_own_text_first() -> None:
    s = screen(
        n(
            "section",
            0,
            0,
            1,
            0.5,
            n("h1", 0, 0, 1, 0.1, value="Total"),
            n("span", 0, 0.1, 1, 0.1, value="  42   EUR "),
            identifier="total",
        )
    )
    total = next(leaf for leaf in s.leaves if leaf.identifier == "total")
    assert total.subtree_text == "Total 42 EUR"
    assert total.own_text == ""


def test_kept_flags_and_password() -> None:
    s = screen(
        n("div", 0, 0, 0.1, 0.1, clickable=True),
        n("div", 0, 0.1, 0.1, 0.1, focused=True),
        n("div", 0, 0.2, 0.1, 0.1, scrollable=True),
        n("input", 0, 0.3, 0.1, 0.1, password=True, value="hunter2"),
        n("input", 0, 0.4, 0.1, 0.1, password=True, label="Password", value="hunter2"),
    )
    assert len(s.leaves) == 5
    assert s.leaves[3].label == PASSWORD_LABEL and s.leaves[3].value == ""
    assert s.leaves[4].label == "Password" and "hunter2" not in s.leaves[4].subtree_text


def test_fingerprint_changes_with_text_and_frame_only() -> None:
    a = screen(n("p", 0, 0, 0.5, 0.1, value="x"))
    b = screen(n("p", 0, 0, 0.5, 0.1, value="x"))
    c = screen(n("p", 0, 0.01, 0.5, 0.1, value="x"))
    d = screen(n("p", 0, 0, 0.5, 0.1, value="y"))
    assert a.fingerprint == b.fingerprint
    assert len({a.fingerprint, c.fingerprint, d.fingerprint}) == 3
    assert screen().empty


# --------------------------------------------------------------------------------------------
# Field matching


def test_text_is_case_insensitive_substring_of_label_or_value() -> None:
    s = screen(
        n("button", 0, 0, 0.2, 0.1, label="Add to Cart"),
        n("p", 0, 0.2, 0.2, 0.1, value="cart is empty"),
        n("p", 0, 0.4, 0.2, 0.1, value="nothing"),
    )
    _, found = matches_for_condition(Selector(text="CART"), s)
    assert labels(found) == ["Add to Cart", "cart is empty"]


def test_text_does_not_match_hoisted_subtree_text() -> None:
    s = screen(n("div", 0, 0, 1, 1, n("p", 0, 0, 1, 0.1, value="Hello"), identifier="box"))
    _, found = matches_for_condition(Selector(text="hello"), s)
    assert labels(found) == ["Hello"]


def test_regex_is_unanchored_case_sensitive_and_per_field() -> None:
    s = screen(
        n("p", 0, 0, 0.2, 0.1, label="Order #123", value="shipped"),
        n("p", 0, 0.2, 0.2, 0.1, value="order #9"),
    )
    assert labels(matches_for_condition(Selector(text_matches=r"#\d+"), s)[1]) == ["Order #123", "order #9"]
    assert labels(matches_for_condition(Selector(text_matches="Order"), s)[1]) == ["Order #123"]
    # label and value are tested separately, never joined
    assert matches_for_condition(Selector(text_matches="123 shipped"), s)[1] == []


def test_identifier_exact_ci_or_android_suffix() -> None:
    s = screen(
        n("button", 0, 0, 0.1, 0.1, identifier="Submit"),
        n("button", 0, 0.2, 0.1, 0.1, identifier="com.acme:id/submit"),
        n("button", 0, 0.4, 0.1, 0.1, identifier="submit-2"),
    )
    assert labels(matches_for_condition(Selector(identifier="submit"), s)[1]) == [
        "Submit",
        "com.acme:id/submit",
    ]


def test_role_is_ci_substring_and_fields_and_together() -> None:
    s = screen(
        n("menuitem", 0, 0, 0.1, 0.1, label="Open"),
        n("button", 0, 0.2, 0.1, 0.1, label="Open"),
    )
    assert labels(matches_for_condition(Selector(role="MENU"), s)[1]) == ["Open"]
    found = matches_for_condition(Selector(role="button", text="open"), s)[1]
    assert [leaf.role for leaf in found] == ["button"]


# --------------------------------------------------------------------------------------------
# Loose selectors


def test_loose_expands_identifier_first_through_loose_scopes() -> None:
    alts = alternatives(loose("Save", within=loose("Dialog")))
    spelled = [(a.identifier, a.text, a.within.identifier, a.within.text) for a in alts if a.within]
    assert spelled == [
        ("Save", None, "Dialog", None),
        ("Save", None, None, "Dialog"),
        (None, "Save", "Dialog", None),
        (None, "Save", None, "Dialog"),
    ]
    assert all(not a.loose for a in alts)


def test_loose_prefers_identifier_match() -> None:
    s = screen(
        n("p", 0, 0, 0.5, 0.1, value="save your work"),
        n("button", 0, 0.5, 0.1, 0.1, identifier="save"),
    )
    assert best_match(loose("save"), s).identifier == "save"  # type: ignore[union-attr]
    assert best_match(Selector(text="save"), s).value == "save your work"  # type: ignore[union-attr]


def test_loose_condition_falls_back_to_text_and_keeps_invisible_fallback() -> None:
    s = screen(
        n("button", 0, 0, 0, 0, identifier="promo"),  # zero-area: identifier match is invisible
        n("p", 0, 0.5, 0.5, 0.1, value="promo code"),
    )
    alt, found = matches_for_condition(loose("promo"), s)
    assert alt.text == "promo" and labels(found) == ["promo code"]
    hidden_only = screen(n("button", 0, 0, 0, 0, identifier="promo"))
    alt, found = matches_for_condition(loose("promo"), hidden_only)
    assert alt.identifier == "promo" and len(found) == 1


# --------------------------------------------------------------------------------------------
# Scopes


def test_inside_and_follows_geometry_with_tolerance() -> None:
    box = Frame(0.1, 0.1, 0.5, 0.5)
    assert inside(Frame(0.096, 0.1, 0.2, 0.2), box)
    assert not inside(Frame(0.09, 0.1, 0.2, 0.2), box)
    anchor = Frame(0.1, 0.1, 0.2, 0.1)
    assert follows(Frame(0.0, 0.204, 0.1, 0.1), anchor)  # below (bottom 0.2 ≤ top + 0.005)
    assert not follows(Frame(0.0, 0.15, 0.1, 0.1), anchor)  # same row, to the left
    assert follows(Frame(0.3, 0.12, 0.1, 0.05), anchor)  # same row, entirely right
    assert not follows(Frame(0.2, 0.12, 0.1, 0.05), anchor)  # same row, overlapping


def _list_screen() -> Any:
    return screen(
        n(
            "ul",
            0,
            0,
            0.5,
            0.5,
            n("li", 0, 0, 0.4, 0.1, value="Apple"),
            n("button", 0.4, 0, 0.1, 0.1, label="Buy"),
            identifier="fruits",
        ),
        n(
            "ul",
            0,
            0.5,
            0.5,
            0.5,
            n("li", 0, 0.5, 0.4, 0.1, value="Carrot"),
            n("button", 0.4, 0.5, 0.1, 0.1, label="Buy"),
            n("li", 0, 0.7, 0.4, 0.1, value="Potato"),
            n("button", 0.4, 0.7, 0.1, 0.1, label="Buy"),
            identifier="veg",
        ),
    )


def test_within_scopes_to_a_container_and_never_self() -> None:
    s = _list_screen()
    found = matches_for_condition(Selector(text="Buy", within=Selector(identifier="veg")), s)[1]
    assert [leaf.frame.y for leaf in found] == [0.5, 0.7]
    # the container is not inside itself
    assert matches_for_condition(Selector(identifier="veg", within=Selector(identifier="veg")), s)[1] == []


def test_after_is_reading_order_and_next_is_the_nearest_follower() -> None:
    s = _list_screen()
    after = matches_for_condition(Selector(text="Buy", after=Selector(text="Carrot")), s)[1]
    assert [leaf.frame.y for leaf in after] == [0.5, 0.7]
    nxt = matches_for_condition(Selector(text="Buy", next=Selector(text="Carrot")), s)[1]
    assert [leaf.frame.y for leaf in nxt] == [0.5]
    # next with several anchors: union of each anchor's nearest
    union = matches_for_condition(Selector(text="Buy", next=Selector(role="li")), s)[1]
    assert [leaf.frame.y for leaf in union] == [0.0, 0.5, 0.7]


def test_next_without_same_row_takes_topmost_below_then_smaller_area() -> None:
    s = screen(
        n("h2", 0, 0, 0.3, 0.1, value="Title"),
        n("p", 0, 0.3, 0.9, 0.2, value="big"),
        n("p", 0.5, 0.3, 0.1, 0.1, value="small"),
        n("p", 0, 0.6, 0.1, 0.1, value="later"),
    )
    nxt = matches_for_condition(Selector(any=True, next=Selector(text="Title")), s)[1]
    assert labels(nxt) == ["small"]


def test_any_picks_first_in_reading_order() -> None:
    s = screen(
        n(
            "div",
            0,
            0,
            1,
            1,
            n("b", 0.6, 0.2, 0.1, 0.1, value="B"),
            n("a", 0.1, 0.2, 0.1, 0.1, value="A"),
            identifier="c",
        )
    )
    assert best_match(Selector(any=True, within=Selector(identifier="c")), s).value == "A"  # type: ignore[union-attr]


def test_invisible_anchor_does_not_scope() -> None:
    s = screen(n("div", 0, 0, 0, 0, identifier="gone"), n("p", 0, 0, 0, 0, value="x"))
    assert matches_for_condition(Selector(text="x", within=Selector(identifier="gone")), s)[1] == []


# --------------------------------------------------------------------------------------------
# Ranking


def test_best_match_prefers_exact_hits_then_smaller_area_then_top_left() -> None:
    s = screen(
        n("div", 0, 0, 1, 0.5, label="Settings and more"),
        n("div", 0.2, 0.6, 0.5, 0.3, label="Settings"),
        n("div", 0.0, 0.6, 0.1, 0.1, label="Settings menu"),
    )
    assert best_match(Selector(text="settings"), s).label == "Settings"  # type: ignore[union-attr]
    t = screen(
        n("a", 0.5, 0.5, 0.1, 0.1, label="Go"),
        n("a", 0.1, 0.5, 0.1, 0.1, label="Go"),
        n("a", 0.1, 0.2, 0.2, 0.2, label="Go"),
    )
    assert best_match(Selector(text="go"), t).frame.x == 0.1  # type: ignore[union-attr]
    assert best_match(Selector(text="go"), t).frame.y == 0.5  # type: ignore[union-attr]


def test_regex_whole_match_counts_as_exact() -> None:
    s = screen(n("p", 0, 0, 0.1, 0.1, value="Total: 5"), n("p", 0, 0.2, 0.5, 0.5, value="5"))
    # the smaller element loses to the one the pattern consumes whole
    assert best_match(Selector(text_matches=r"\d"), s).value == "5"  # type: ignore[union-attr]
    assert best_match(Selector(text_matches=r"\d|Total"), s).value == "5"  # type: ignore[union-attr]
    assert best_match(Selector(text_matches=r"Total: \d|\d"), s).value == "Total: 5"  # type: ignore[union-attr]


def test_best_match_ignores_invisible() -> None:
    s = screen(n("button", 0, 0, 0, 0, label="Go"))
    assert best_match(Selector(text="Go"), s) is None


# --------------------------------------------------------------------------------------------
# Conditions and their reasons


def cond(kind: Any, sel: Selector, mode: Any = None, expected: str | None = None) -> Condition:
    return Condition(kind=kind, selector=sel, mode=mode, expected=expected)


def test_exists_visible_hidden() -> None:
    s = screen(n("p", 0.5, 0.5, 0, 0, value="ghost"), n("p", 0, 0.1, 0.5, 0.1, value="Hello"))
    assert evaluate(cond("exists", Selector(text="ghost")), s).ok
    v = evaluate(cond("visible", Selector(text="ghost")), s)
    assert v.reason == 'element(s) matched text="ghost" but none was visible (zero-area frame)'
    assert (
        evaluate(cond("visible", Selector(text="nope")), s).reason
        == 'no element matched selector text="nope" — no text on the screen comes close to it'
    )
    assert (
        evaluate(cond("exists", Selector(identifier="x")), s).reason
        == 'no element matched selector id="x" — no element on the screen has an id'
    )
    assert evaluate(cond("hidden", Selector(text="ghost")), s).ok
    h = evaluate(cond("hidden", Selector(text="hello")), s)
    assert h.reason == 'an element matching text="hello" was still visible'


def test_text_condition_modes_and_reason() -> None:
    s = screen(
        n(
            "section",
            0,
            0.5,
            1,
            0.2,
            n("span", 0, 0.5, 0.5, 0.1, value="Total"),
            n("b", 0.5, 0.5, 0.5, 0.1, value="42"),
            identifier="total",
            label="Sum",
        ),
        n("section", 0, 0.1, 1, 0.2, identifier="total", label="Top"),
    )
    sel = Selector(identifier="total")
    # the first visible match in reading order is the top one
    r = evaluate(cond("text", sel, "contains", "42"), s)
    assert r.reason == 'element matched id="total" but its text was "Top" (wanted to contain "42")'
    s2 = screen(
        n(
            "section",
            0,
            0.5,
            1,
            0.2,
            n("span", 0, 0.5, 0.5, 0.1, value="Total"),
            n("b", 0.5, 0.5, 0.5, 0.1, value="42"),
            identifier="total",
            label="Sum",
        )
    )
    assert evaluate(cond("text", sel, "contains", "total 42"), s2).ok
    assert evaluate(cond("text", sel, "equals", "sum total 42"), s2).ok
    assert evaluate(cond("text", sel, "equals", "SUM"), s2).ok  # own text
    assert evaluate(cond("text", sel, "matches", r"Total \d+"), s2).ok
    bad = evaluate(cond("text", sel, "matches", r"^total"), s2)
    assert bad.reason == (
        'element matched id="total" but its text was "Sum Total 42" (own text "Sum") (wanted to match /^total/)'
    )
    eq = evaluate(cond("text", sel, "equals", "Total"), s2)
    assert eq.reason is not None and eq.reason.endswith('(wanted to equal "Total")')
    none = evaluate(cond("text", Selector(identifier="nope"), "contains", "x"), s2)
    assert none.reason == 'no element matched selector id="nope" — ids on the screen: "total"'


def test_reason_describes_scopes() -> None:
    s = screen(n("p", 0, 0, 0.1, 0.1, value="x"))
    r = evaluate(cond("visible", Selector(text="Buy", within=Selector(identifier="cart"))), s)
    assert r.reason == (
        'no element matched selector text="Buy" within (id="cart") — nothing on the screen matches its within '
        'scope (id="cart")'
    )


# --------------------------------------------------------------------------------------------
# ARIA roles, names, css (a web read gives each node its ARIA role and its kind)


def web(role: str, kind: str, x: float, y: float, w: float, h: float, *children: UiNode, **kw: Any) -> UiNode:
    return UiNode(role=role, kind=kind, frame=Frame(x, y, w, h), children=tuple(children), **kw)


def test_an_element_with_an_aria_role_is_selectable_without_a_name() -> None:
    s = screen(
        web("dialog", "div", 0, 0, 0.5, 0.5, web("button", "button", 0.1, 0.1, 0.1, 0.1, label="OK")),
        web("", "div", 0.5, 0.5, 0.1, 0.1),  # no role, no name: nothing to select it by
        n("div", 0.6, 0.6, 0.1, 0.1),  # off the web: a role alone keeps nothing (upstream's rule)
    )
    assert [(leaf.role, leaf.kind) for leaf in s.leaves] == [("dialog", "div"), ("button", "button")]
    inner = best_match(Selector(text="OK", within=Selector(role="dialog")), s)
    assert inner is not None and inner.label == "OK"


def test_role_is_the_aria_role_exactly_or_upstreams_role_string_as_a_substring() -> None:
    s = screen(
        web("textbox", "input", 0, 0, 0.2, 0.1, label="Email"),
        web("list", "ul", 0, 0.2, 0.2, 0.3, web("listitem", "li", 0, 0.2, 0.2, 0.1, value="Milk")),
        web("listbox", "listbox", 0, 0.6, 0.2, 0.1, label="Fruit"),  # an explicit role attribute
        web("", "div", 0, 0.8, 0.2, 0.1, value="plain"),
    )

    def roles(role: str) -> list[str]:
        return [f"{leaf.role}/{leaf.kind}" for leaf in matches_for_condition(Selector(role=role), s)[1]]

    assert roles("textbox") == ["textbox/input"]
    assert roles("TEXTBOX") == ["textbox/input"]
    assert roles("input") == ["textbox/input"]  # the tag, as upstream flows name it
    assert roles("inp") == ["textbox/input"]  # upstream's substring
    assert roles("list") == ["list/ul", "listbox/listbox"]  # ARIA exactly; the role attribute holds it
    assert roles("listitem") == ["listitem/li"]
    assert roles("text") == []  # an ARIA role is never a substring match
    assert roles("div") == ["/div"]
    # off the web (no kind) the role is upstream's substring, as before
    assert [
        leaf.label
        for leaf in matches_for_condition(
            Selector(role="MENU"), screen(n("menuitem", 0, 0, 1, 1, label="Open"))
        )[1]
    ] == ["Open"]


def test_text_with_the_aria_role_matches_the_name_or_any_text_inside() -> None:
    s = screen(
        web(
            "listitem",
            "li",
            0,
            0,
            0.5,
            0.1,
            web("", "span", 0, 0, 0.2, 0.1, value="Milk"),
            web("button", "button", 0.3, 0, 0.1, 0.1, label="Remove"),
        ),
        web("listitem", "li", 0, 0.1, 0.5, 0.1, value="Bread"),
    )
    milk = best_match(Selector(role="listitem", text="milk"), s)
    assert milk is not None and milk.frame.y == 0
    assert best_match(Selector(role="listitem", text_matches="^Milk Remove$"), s) is not None
    # the tag way keeps upstream's meaning: the element's own label or value only
    assert best_match(Selector(role="li", text="milk"), s) is None
    # no element's own text holds it: the deepest element whose whole text does (the item)
    whole = best_match(Selector(text="Milk Remove"), s)
    assert whole is not None and (whole.role, whole.frame.y) == ("listitem", 0)


def test_css_matches_the_elements_the_read_marked() -> None:
    s = screen(
        web("button", "button", 0, 0, 0.1, 0.1, label="Save", css=frozenset({".primary"})),
        web("button", "button", 0.2, 0, 0.1, 0.1, label="Save"),
        web("", "div", 0, 0.5, 0.2, 0.2, css=frozenset({".box", ".primary"})),  # kept: it matched
    )
    found = matches_for_condition(Selector(css=".primary"), s)[1]
    assert [(leaf.role, leaf.frame.x) for leaf in found] == [("button", 0), ("", 0)]
    assert best_match(Selector(css=".primary", text="Save"), s).frame.x == 0  # type: ignore[union-attr]
    assert best_match(Selector(css=".box"), s).kind == "div"  # type: ignore[union-attr]
    assert best_match(Selector(css=".missing"), s) is None


def test_css_selectors_of_a_selector_and_its_scopes_once_each() -> None:
    sel = Selector(
        css="b",
        within=Selector(css="form", next=Selector(css="b")),
        after=Selector(text="x", within=Selector(css="h1")),
    )
    assert css_selectors(sel, None, Selector(css="p")) == ("b", "form", "h1", "p")
    assert css_selectors(Selector(text="x")) == ()


# --------------------------------------------------------------------------------------------
# Messages that teach


def _dialog_screen() -> Any:
    return screen(
        web(
            "dialog",
            "div",
            0,
            0,
            0.6,
            0.5,
            web("heading", "h2", 0, 0, 0.6, 0.1, label="Rename file"),
            web("textbox", "input", 0, 0.1, 0.6, 0.1, label="New name", value="Untitled.ipynb"),
            web("button", "button", 0, 0.3, 0.2, 0.1, label="Cancel"),
            web("button", "button", 0.3, 0.3, 0.2, 0.1, label="Rename and Save"),
        ),
        web("button", "button", 0.7, 0.9, 0.1, 0.1, label="Help"),
        web("link", "a", 0.8, 0.9, 0.1, 0.1, label="Docs", identifier="docs-link"),
    )


def test_a_miss_names_the_elements_of_the_role_nearest_first() -> None:
    s = _dialog_screen()
    sel = Selector(role="button", text="Rename file")
    assert no_match_reason(sel, s) == (
        'no element matched selector text="Rename file" role="button" — buttons here: "Rename and Save", '
        '"Cancel", "Help"'
    )
    scoped = Selector(role="button", text="Rename file", within=Selector(role="dialog"))
    assert no_match_reason(scoped, s) == (
        'no element matched selector text="Rename file" role="button" within (role="dialog") — buttons here: '
        '"Rename and Save", "Cancel"'
    )
    assert no_match_reason(Selector(role="checkbox", text="Agree"), s) == (
        'no element matched selector text="Agree" role="checkbox" — no checkbox is on the screen; no text on '
        "the screen comes close to it"
    )


def test_a_miss_names_the_close_texts_ids_and_roles() -> None:
    s = _dialog_screen()
    assert no_match_reason(Selector(text="Renam"), s) == (
        'no element matched selector text="Renam" — the nearest texts on the screen: heading "Rename file", '
        'button "Rename and Save"'
    )
    assert no_match_reason(Selector(text="Hlep"), s) == (
        'no element matched selector text="Hlep" — the nearest texts on the screen: button "Help"'
    )
    assert no_match_reason(Selector(text="Checkout"), s) == (
        'no element matched selector text="Checkout" — no text on the screen comes close to it'
    )
    assert no_match_reason(Selector(identifier="doc-link"), s) == (
        'no element matched selector id="doc-link" — ids on the screen: "docs-link"'
    )
    assert no_match_reason(Selector(role="tab"), s) == (
        'no element matched selector role="tab" — roles on the screen: link, dialog, textbox, button, heading'
    )
    assert no_match_reason(Selector(css=".x"), s) == (
        'no element matched selector css=".x" — no visible element on the screen matches that CSS selector'
    )


def test_a_miss_says_which_scope_ruled_it_out() -> None:
    s = _dialog_screen()
    assert no_match_reason(Selector(text="Help", within=Selector(role="dialog")), s) == (
        'no element matched selector text="Help" within (role="dialog") — text="Help" is on the screen, but not '
        'within (role="dialog")'
    )
    assert no_match_reason(Selector(text="OK", within=Selector(role="alertdialog")), s) == (
        'no element matched selector text="OK" within (role="alertdialog") — nothing on the screen matches its '
        'within scope (role="alertdialog")'
    )


def test_a_miss_on_a_screen_with_nothing_visible_says_why() -> None:
    blank = flatten(UiTree(root=web("", "html", 0, 0, 1, 1), blank="the page is blank (its <body> is empty)"))
    assert no_match_reason(Selector(text="Go"), blank) == (
        'no element matched selector text="Go" — nothing on the screen is visible: the page is blank (its <body> '
        "is empty)"
    )
    assert no_match_reason(Selector(text="Go"), screen()) == (
        'no element matched selector text="Go" — nothing on the screen is visible'
    )


def test_the_off_screen_hint_only_when_an_element_matches() -> None:
    s = screen(
        web("button", "button", 0, 1, 0.1, 0, label="Pay now"),
        web("button", "button", 0, 0, 0.1, 0.1, label="Pay later"),
    )
    assert miss_reason(Selector(text="Pay now"), s) == (
        'no visible element matched selector text="Pay now" — one lies below the screen: add a scroll-to step '
        "before this one"
    )
    assert miss_reason(Selector(text="Checkout"), s) == (
        'no visible element matched selector text="Checkout" — no text on the screen comes close to it'
    )
    assert miss_reason(Selector(text="Pay soon"), s) == (
        'no visible element matched selector text="Pay soon" — the nearest texts on the screen: button '
        '"Pay later"'
    )


def test_an_off_screen_match_is_said_where_it_lies() -> None:
    """An element beyond the screen's edge (its empty frame a point on that edge) is named where it
    lies and what brings it; one beyond its scroll area's view, with the area; one whose empty frame
    lies inside the screen (hidden, of no size) lies nowhere: the hint stays an if."""
    s = screen(
        web("button", "button", 1, 0.2, 0, 0, label="Right"),
        web("button", "button", 0.2, 0, 0, 0, label="Up"),
        web(
            "list",
            "ul",
            0,
            0.3,
            0.5,
            0.2,
            web("listitem", "li", 0, 0.3, 0.5, 0.1, value="Seen"),
            web("listitem", "li", 0, 0.5, 0, 0, value="Deep"),
            identifier="feed",
            scrollable=True,
        ),
        web("p", "p", 0.5, 0.5, 0, 0, value="Nothing"),
        web("p", "p", 0.6, 1, 0, 0, value="Below"),
    )
    assert miss_reason(Selector(text="Right"), s) == (
        'no visible element matched selector text="Right" — one lies to the right of the screen: add a '
        "scroll-to step (direction: right) before this one"
    )
    assert miss_reason(Selector(text="Up"), s) == (
        'no visible element matched selector text="Up" — one lies above the screen: add a scroll-to step '
        "(direction: up) before this one"
    )
    assert miss_reason(Selector(text="Deep"), s) == (
        'no visible element matched selector text="Deep" — one lies below the view of its scroll area (id '
        '"feed"): add a scroll-to step with within: that area before this one'
    )
    assert miss_reason(Selector(text="Nothing"), s) == off_screen_reason(Selector(text="Nothing"))
    assert evaluate(cond("visible", Selector(text="Below")), s).reason == (
        'element(s) matched text="Below" but none was visible — one lies below the screen: add a scroll-to '
        "step before this one"
    )
    assert evaluate(cond("visible", Selector(text="Nothing")), s).reason == (
        'element(s) matched text="Nothing" but none was visible (zero-area frame)'
    )


def test_a_miss_lists_a_bounded_number_of_candidates_in_a_fixed_order() -> None:
    buttons = [web("button", "button", 0, i / 1000, 0.1, 0.0009, label=f"Item {i:04d}") for i in range(1000)]
    s = screen(*buttons)
    reason = no_match_reason(Selector(role="button", text="Item 12345"), s)
    # the first MISS_CANDIDATES_EXAMINED in reading order are compared; ties keep reading order
    assert reason == (
        'no element matched selector text="Item 12345" role="button" — buttons here: "Item 0034", "Item 0035", '
        f'"Item 0045", "Item 0123", "Item 0124" and {MISS_CANDIDATES_EXAMINED - 5} more'
    )
    assert no_match_reason(Selector(role="button", text="Item 12345"), s) == reason  # deterministic
    long = screen(web("button", "button", 0, 0, 0.1, 0.1, label="Save " + "x" * 500))
    assert no_match_reason(Selector(role="button", text="Save all"), long) == (
        'no element matched selector text="Save all" role="button" — buttons here: "Save '
        + "x" * (MISS_CANDIDATE_CHARS - 6)
        + '…"'
    )


def test_plural_of_role_names() -> None:
    assert [plural(w) for w in ("button", "textbox", "checkbox", "switch", "listitem", "entry", "key")] == [
        "buttons",
        "textboxes",
        "checkboxes",
        "switches",
        "listitems",
        "entries",
        "keys",
    ]


def test_text_matches_a_placeholder_or_title_that_is_not_the_name() -> None:
    # upstream named a field by its placeholder before its <label>: such flows keep finding it
    s = screen(web("textbox", "input", 0, 0, 0.2, 0.1, label="Email", description="you@example.com"))
    assert best_match(Selector(text="you@example"), s) is not None
    assert best_match(loose("you@example.com"), s) is not None
    assert best_match(Selector(text="Email"), s) is not None


def test_any_passes_by_an_element_kept_for_its_role_alone() -> None:
    # `any: true` picks the first element in reading order, as upstream did: a list that starts left of
    # its first link is no such element
    s = screen(
        web(
            "navigation",
            "nav",
            0,
            0,
            1,
            0.2,
            web(
                "list",
                "ul",
                0,
                0,
                1,
                0.2,
                web("listitem", "li", 0.05, 0, 0.5, 0.1, web("link", "a", 0.05, 0, 0.2, 0.1, label="First")),
            ),
            identifier="menu",
        )
    )
    first = best_match(Selector(any=True, within=Selector(identifier="menu")), s)
    assert first is not None and first.label == "First"
    assert [leaf.role for leaf in matches_for_condition(Selector(role="list"), s)[1]] == ["list"]


# --------------------------------------------------------------------------------------------
# Whole text: a text drawn across several elements


def code_line(y: float, *, text: str, own: str) -> UiNode:
    """A highlighted code line as the walker reads it: a <pre> whose own text is what lies between its
    keyword spans (out of order once joined), with the line in reading order (``text``)."""
    return web(
        "",
        "pre",
        0,
        y,
        0.6,
        0.05,
        web("", "span", 0, y, 0.1, 0.05, value="select"),
        web("", "span", 0.3, y, 0.1, 0.05, value="from"),
        value=own,
        text=text,
    )


def test_a_text_no_element_holds_matches_the_deepest_element_whose_whole_text_does() -> None:
    line = code_line(0.2, text="select id, name, year from languages", own="id, name, year languages")
    s = screen(web("main", "main", 0, 0, 1, 1, web("", "div", 0, 0.2, 0.6, 0.1, line, identifier="editor")))
    pre = best_match(Selector(text="select id, name, year"), s)
    assert pre is not None and (pre.kind, pre.value) == ("pre", "id, name, year languages")
    assert pre.whole == "select id, name, year from languages"
    # the loose form finds it too, and so does a condition; the editor and <main> hold it as well,
    # but the deepest element is the one a person points at
    assert best_match(loose("select id, name, year"), s) == pre
    assert matches_for_condition(Selector(text="SELECT ID, name"), s)[1] == [pre]
    assert evaluate(Condition("visible", Selector(text="year from languages")), s).ok
    # the order of the parts is what a person reads, not own text first
    assert best_match(Selector(text="id, name, year languages select"), s) is None
    # within a scope, and its ancestors' whole text reads the line in order too
    assert best_match(Selector(text="select id", within=Selector(identifier="editor")), s) == pre
    editor = next(leaf for leaf in s.leaves if leaf.identifier == "editor")
    assert editor.whole == "select id, name, year from languages"
    assert evaluate(Condition("text", Selector(identifier="editor"), "contains", "select id, name"), s).ok


def test_an_element_whose_own_text_matches_is_chosen_as_before() -> None:
    # an own match anywhere wins over a whole-text match (what existing flows select stays selected)
    line = code_line(0.2, text="select id, name from t", own="id, name t")
    s = screen(line, web("", "p", 0, 0.6, 0.5, 0.05, value="id, name"))
    found = matches_for_condition(Selector(text="id, name"), s)[1]
    assert [(leaf.kind, leaf.value) for leaf in found] == [("pre", "id, name t"), ("p", "id, name")]
    # a role keeps its own rule (an ARIA role matches text inside; a tag, upstream's own text only)
    assert best_match(Selector(role="pre", text="select id"), s) is None
    # a pattern is matched with the element's own texts only, as before
    assert best_match(Selector(text_matches="select id"), s) is None
