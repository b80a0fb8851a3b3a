"""Keys as a page sees them: W3C ``KeyboardEvent.key`` names, their ``code`` and virtual key code, and
chords (modifiers joined to a key by ``+``: ``Shift+Enter``, ``Control+S``).

One home for the key vocabulary: the flow language checks a `press:` step's keys with it when the
flow is read (``argent.flows`` may not import a device), the ``keyboard`` tool checks its ``key``,
and a device turns a chord into its key events (on Chromium, ``argent.devices.chromium.keys``). The layout is
US English, as in every headless browser.
"""

from __future__ import annotations

from attrs import frozen

__all__ = [
    "KEY_NAMES",
    "MODIFIERS",
    "SUPPORTED_KEYS",
    "Chord",
    "Key",
    "KeyNameError",
    "char_key",
    "named_key",
    "parse_chord",
    "unknown_key_message",
]


@frozen
class Key:
    """One key: ``key`` and ``code`` as ``KeyboardEvent`` has them, the Windows virtual key code
    (``keyCode``), the character it types (``text``: a keypress and an input follow its keydown) and
    its ``location`` (1: the left one of a pair)."""

    key: str
    code: str
    key_code: int
    text: str = ""
    location: int = 0


#: The modifiers, in their canonical spelling, as the key a person holds down (the left one).
MODIFIERS: dict[str, Key] = {
    "Shift": Key("Shift", "ShiftLeft", 16, location=1),
    "Control": Key("Control", "ControlLeft", 17, location=1),
    "Alt": Key("Alt", "AltLeft", 18, location=1),
    "Meta": Key("Meta", "MetaLeft", 91, location=1),
}

_NAMED: dict[str, Key] = {
    "Enter": Key("Enter", "Enter", 13, "\r"),
    "Tab": Key("Tab", "Tab", 9),
    "Escape": Key("Escape", "Escape", 27),
    "Backspace": Key("Backspace", "Backspace", 8),
    "Delete": Key("Delete", "Delete", 46),
    "Insert": Key("Insert", "Insert", 45),
    "Space": Key(" ", "Space", 32, " "),
    "ArrowUp": Key("ArrowUp", "ArrowUp", 38),
    "ArrowDown": Key("ArrowDown", "ArrowDown", 40),
    "ArrowLeft": Key("ArrowLeft", "ArrowLeft", 37),
    "ArrowRight": Key("ArrowRight", "ArrowRight", 39),
    "Home": Key("Home", "Home", 36),
    "End": Key("End", "End", 35),
    "PageUp": Key("PageUp", "PageUp", 33),
    "PageDown": Key("PageDown", "PageDown", 34),
    "ContextMenu": Key("ContextMenu", "ContextMenu", 93),
    **{f"F{n}": Key(f"F{n}", f"F{n}", 111 + n) for n in range(1, 25)},
    **MODIFIERS,
}

#: Other spellings people use, by their normal form (lowercase, no ``-``, ``_`` or space).
_ALIASES = {
    "return": "Enter",
    "esc": "Escape",
    "del": "Delete",
    "ins": "Insert",
    "spacebar": "Space",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "ctrl": "Control",
    "control": "Control",
    "cmd": "Meta",
    "command": "Meta",
    "option": "Alt",
}

#: Every name a key may be spelled by, canonical ones first (for a "did you mean").
KEY_NAMES: tuple[str, ...] = (*_NAMED, *_ALIASES)

_BY_NORM: dict[str, str] = {
    **{name.lower(): name for name in _NAMED},
    **_ALIASES,
}

#: The keys ``parse_chord`` accepts, as listed in error messages.
SUPPORTED_KEYS = (
    "Enter, Tab, Escape, Backspace, Delete, Insert, Space, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, "
    "Home, End, PageUp, PageDown, ContextMenu, F1 … F24, Shift, Control, Alt, Meta (any case; also return, "
    "esc, del, up/down/left/right, ctrl, cmd), any single character, and chords: modifiers joined to a key "
    "by + (Shift+Enter, Control+S, Control+Shift+ArrowLeft)"
)

#: US English: the character a key types with Shift held, by the character it types alone.
_SHIFTED = dict(zip("`1234567890-=[]\\;',./", '~!@#$%^&*()_+{}|:"<>?', strict=True))
_UNSHIFTED = {shifted: plain for plain, shifted in _SHIFTED.items()}
#: The ``code`` and virtual key code of the punctuation keys (by the character they type alone).
_PUNCTUATION: dict[str, tuple[str, int]] = {
    " ": ("Space", 32),
    "-": ("Minus", 189),
    "=": ("Equal", 187),
    "[": ("BracketLeft", 219),
    "]": ("BracketRight", 221),
    "\\": ("Backslash", 220),
    ";": ("Semicolon", 186),
    "'": ("Quote", 222),
    ",": ("Comma", 188),
    ".": ("Period", 190),
    "/": ("Slash", 191),
    "`": ("Backquote", 192),
}


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in "-_ ")


def named_key(name: str) -> Key | None:
    """The key called ``name`` (case, ``-``, ``_`` and spaces ignored; aliases too), or None."""
    canonical = _BY_NORM.get(_norm(name))
    return None if canonical is None else _NAMED[canonical]


def char_key(ch: str) -> Key | None:
    """The key that types ``ch`` (newline: Enter, tab: Tab); None for anything but one printable
    character. A character of the US layout gets its key's code (``!`` is ``Digit1``); any other
    printable character is typed as a key of its own (no code)."""
    if ch in ("\r", "\n"):
        return _NAMED["Enter"]
    if ch == "\t":
        return _NAMED["Tab"]
    if len(ch) != 1 or not ch.isprintable():
        return None
    base = _UNSHIFTED.get(ch, ch)
    if "a" <= base.lower() <= "z" and base.isascii():
        return Key(ch, f"Key{base.upper()}", ord(base.upper()), ch)
    if base.isascii() and base.isdigit():
        return Key(ch, f"Digit{base}", ord(base), ch)
    code, key_code = _PUNCTUATION.get(base, ("", 0))
    return Key(ch, code, key_code, ch)


@frozen
class Chord:
    """Modifiers held, in the order they go down, then one key pressed: ``key`` is that key as the
    page sees it with the modifiers held (``Shift+a`` types ``A``; with Control, Alt or Meta held a
    key types nothing). ``name`` is the canonical spelling (``Control+Shift+ArrowLeft``)."""

    modifiers: tuple[str, ...]
    key: Key
    name: str


class KeyNameError(ValueError):
    """A key or chord that cannot be pressed: ``part`` is the piece at fault (the whole text when it
    is one key), ``problem`` what is wrong with it (None: no such key)."""

    def __init__(self, spelled: str, part: str, problem: str | None = None) -> None:
        super().__init__(unknown_key_message(spelled, part, problem))
        self.spelled = spelled
        self.part = part
        self.problem = problem


def unknown_key_message(
    spelled: str, part: str | None = None, problem: str | None = None, hint: str | None = None
) -> str:
    """``Unknown key "x". Supported: …`` — naming the part of a chord at fault, and the key meant
    when ``hint`` names one."""
    part = spelled if part is None else part
    where = "" if part == spelled else f' in "{spelled}"'
    said = f' (did you mean "{hint}"?)' if hint else ""
    if problem is not None:
        return f'"{part}"{where} {problem}{said}. Supported: {SUPPORTED_KEYS}.'
    return f'Unknown key "{part}"{where}{said}. Supported: {SUPPORTED_KEYS}.'


def _one(part: str) -> tuple[str, Key] | None:
    """A part of a chord: its canonical spelling and key."""
    if len(part) == 1:
        key = char_key(part)
        named = next((name for name, known in _NAMED.items() if known == key), None) if key else None
        return None if key is None else (named or part, key)
    canonical = _BY_NORM.get(_norm(part))
    return None if canonical is None else (canonical, _NAMED[canonical])


def _split(text: str) -> list[str]:
    """The parts of a chord: ``+`` joins them, and a ``+`` at the end is the key ``+`` itself."""
    if text == "+":
        return ["+"]
    if text.endswith("++"):
        return [*text[:-2].split("+"), "+"]
    return text.split("+")


def parse_chord(text: str) -> Chord:
    """``text`` as a key or a chord; ``KeyNameError`` says what is wrong with it."""
    parts = _split(text)
    if len(parts) == 1:
        one = _one(text)
        if one is None:
            raise KeyNameError(text, text, "is not a key" if not text.strip() else None)
        return Chord((), one[1], one[0])
    modifiers: list[str] = []
    for part in parts[:-1]:
        one = _one(part) if part else None
        if one is None:
            if not part.strip():
                raise KeyNameError(text, text, "has an empty part — join keys with a single +")
            raise KeyNameError(text, part)
        name = one[0]
        if name not in MODIFIERS:
            raise KeyNameError(
                text,
                part,
                "is not a modifier — the modifiers (Shift, Control, Alt, Meta) come first, the key last",
            )
        if name in modifiers:
            raise KeyNameError(text, part, "is held twice")
        modifiers.append(name)
    last = parts[-1]
    one = _one(last) if last else None
    if one is None:
        if not last.strip():
            raise KeyNameError(text, text, "has no key after its last +")
        raise KeyNameError(text, last)
    name, key = one
    if name in modifiers:
        raise KeyNameError(text, last, "is held twice")
    key, name = _held(key, name, modifiers)
    return Chord(tuple(modifiers), key, "+".join([*modifiers, name]))


def _held(key: Key, name: str, modifiers: list[str]) -> tuple[Key, str]:
    """The key as the page sees it with ``modifiers`` held, and its spelling in the chord: a letter
    is spelled upper-case and names its key (``Control+S`` sends ``s``, ``Shift+S`` sends ``S``);
    Shift turns the other characters of the layout to their shifted ones (``Shift+1`` sends ``!``);
    with Control, Alt or Meta held a key types nothing."""
    if len(name) == 1 and key.text:
        typed = name
        if name.isascii() and name.isalpha():
            name = name.upper()
            typed = name if "Shift" in modifiers else name.lower()
        elif "Shift" in modifiers:
            typed = _SHIFTED.get(name, name)
        key = Key(typed, key.code, key.key_code, typed, key.location)
    if key.text and any(mod in modifiers for mod in ("Control", "Alt", "Meta")):
        key = Key(key.key, key.code, key.key_code, "", key.location)
    return key, name
