"""Key descriptors for ``Input.dispatchKeyEvent``: named keys and printable characters."""

from __future__ import annotations

from attrs import frozen


@frozen
class KeyDef:
    key: str
    code: str
    key_code: int
    #: The character the key produces (makes the key event also type it / fire keypress).
    text: str = ""

    def params(self, event_type: str) -> dict[str, object]:
        out: dict[str, object] = {
            "type": event_type,
            "key": self.key,
            "code": self.code,
            "windowsVirtualKeyCode": self.key_code,
            "nativeVirtualKeyCode": self.key_code,
        }
        if event_type == "keyDown" and self.text:
            out["text"] = self.text
            out["unmodifiedText"] = self.text
        return out

    @property
    def down_type(self) -> str:
        """``keyDown`` (with text: a character is typed) or ``rawKeyDown`` (a bare key)."""
        return "keyDown" if self.text else "rawKeyDown"


_NAMED: dict[str, KeyDef] = {
    "enter": KeyDef("Enter", "Enter", 13, "\r"),
    "tab": KeyDef("Tab", "Tab", 9),
    "escape": KeyDef("Escape", "Escape", 27),
    "backspace": KeyDef("Backspace", "Backspace", 8),
    "delete": KeyDef("Delete", "Delete", 46),
    "space": KeyDef(" ", "Space", 32, " "),
    "arrowup": KeyDef("ArrowUp", "ArrowUp", 38),
    "arrowdown": KeyDef("ArrowDown", "ArrowDown", 40),
    "arrowleft": KeyDef("ArrowLeft", "ArrowLeft", 37),
    "arrowright": KeyDef("ArrowRight", "ArrowRight", 39),
    "home": KeyDef("Home", "Home", 36),
    "end": KeyDef("End", "End", 35),
    "pageup": KeyDef("PageUp", "PageUp", 33),
    "pagedown": KeyDef("PageDown", "PageDown", 34),
    **{f"f{n}": KeyDef(f"F{n}", f"F{n}", 111 + n) for n in range(1, 13)},
}
_ALIASES = {
    "return": "enter",
    "esc": "escape",
    "del": "delete",
    "up": "arrowup",
    "down": "arrowdown",
    "left": "arrowleft",
    "right": "arrowright",
}

#: The names ``press_key`` accepts, as listed in error messages.
SUPPORTED_KEYS = (
    "enter, return, tab, escape, esc, backspace, delete, space, arrowup, arrowdown, arrowleft, arrowright "
    "(also arrow-up … or up/down/left/right), home, end, pageup, pagedown, f1 … f12"
)


def named_key(name: str) -> KeyDef | None:
    """The key called ``name`` (case, ``-``, ``_`` and spaces ignored), or None."""
    norm = "".join(ch for ch in name.lower() if ch not in "-_ ")
    norm = _ALIASES.get(norm, norm)
    return _NAMED.get(norm)


def unknown_key_message(name: str) -> str:
    return f'Unknown key "{name}". Supported: {SUPPORTED_KEYS}.'


_PUNCTUATION_CODES = {
    " ": "Space",
    "-": "Minus",
    "=": "Equal",
    "[": "BracketLeft",
    "]": "BracketRight",
    "\\": "Backslash",
    ";": "Semicolon",
    "'": "Quote",
    ",": "Comma",
    ".": "Period",
    "/": "Slash",
    "`": "Backquote",
}


def char_key(ch: str) -> KeyDef | None:
    """The key event that types ``ch`` (printable ASCII, newline, tab); None for anything else."""
    if ch in "\r\n":
        return _NAMED["enter"]
    if ch == "\t":
        return _NAMED["tab"]
    if len(ch) != 1 or not (0x20 <= ord(ch) <= 0x7E):
        return None
    if ch.isalpha():
        return KeyDef(ch, f"Key{ch.upper()}", ord(ch.upper()), ch)
    if ch.isdigit():
        return KeyDef(ch, f"Digit{ch}", ord(ch), ch)
    return KeyDef(ch, _PUNCTUATION_CODES.get(ch, ""), 32 if ch == " " else 0, ch)
