"""`describe`'s text: each element as a selector names it (ARIA role, else tag; the accessible name),
and why nothing is visible when that is so."""

from __future__ import annotations

from argent.devices.base import Frame, UiNode, UiTree
from argent.tools.device_tools.tree_text import describe_text, node_line

HEAD = 6  # the lines before the ROOT line


def web(role: str, kind: str, *children: UiNode, **kw: object) -> UiNode:
    return UiNode(role=role, kind=kind, frame=Frame(0, 0, 0.5, 0.25), children=children, **kw)  # type: ignore[arg-type]


def test_each_line_shows_the_aria_role_else_the_tag_and_the_name() -> None:
    assert node_line(
        web("textbox", "input", label="Email", value="a@b.c", identifier="email", clickable=True)
    ) == ('textbox "Email" value="a@b.c" id="email" [clickable]  (0.000, 0.000, 0.500, 0.250)')
    assert node_line(web("", "div", value="Plain")) == 'div value="Plain"  (0.000, 0.000, 0.500, 0.250)'
    assert node_line(web("", "")) == "node  (0.000, 0.000, 0.500, 0.250)"
    # the text a person reads in it, where its own text and its children's interleave
    assert node_line(web("", "pre", value="id name", text="select id, name")) == (
        'pre value="id name" text="select id, name"  (0.000, 0.000, 0.500, 0.250)'
    )
    tree = UiTree(root=web("", "html", web("dialog", "div", web("separator", "hr")), web("", "div")))
    lines = describe_text(tree).splitlines()[HEAD:]
    assert lines == [
        "ROOT  html (0.000, 0.000, 0.500, 0.250)",
        "",
        "  dialog  (0.000, 0.000, 0.500, 0.250)",
        "    separator  (0.000, 0.000, 0.500, 0.250)",  # a role alone is something to select it by
    ]


def test_a_screen_that_shows_nothing_says_why() -> None:
    blank = UiTree(root=web("", "html"), blank="the page is blank (its <body> is empty)")
    assert describe_text(blank).splitlines()[HEAD:] == [
        "ROOT  html (0.000, 0.000, 0.500, 0.250)",
        "",
        "",
        "Nothing a selector can name is visible: the page is blank (its <body> is empty).",
    ]
    assert describe_text(UiTree(root=web("", "html"))).splitlines()[-1] == (
        "The UI tree is empty: the device named no element on this screen (it did not say why)."
    )
