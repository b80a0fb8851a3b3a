"""A flow file that does not parse, said in plain words: what is wrong on which line, and what to do.

The parser's own messages keep the YAML reader's words (``while parsing a block collection, expected
<block end>, but found '<block sequence start>'``): they are the upstream-shaped text of a
``FLOW_FILE_INVALID`` answer, which clients match. `argent flow check` (and `argent flow run`'s check
before a device starts) say the same problem the way a person who just mistyped a line needs it: the
line to look at, what the reader saw there, and the edit that fixes it. Each of the reader's problems
a hand-written flow meets is named here; any other keeps the reader's words with a general hint.
"""

from __future__ import annotations

import re

from attrs import frozen

from argent.errors import FlowParseError, YamlSyntax

__all__ = ["Explained", "explain_parse_error"]


@frozen
class Explained:
    """One problem: the 1-based ``line`` (None: the file as a whole), ``what`` is wrong and ``todo``:
    what to do. Both are sentences without their final period."""

    line: int | None
    what: str
    todo: str


#: The end of a grammar message that names its step and line (``(step 2, line 3)``): the line is said
#: before the message, as ``<path>:<line>:``.
_STEP_SUFFIX = re.compile(r" \(step ([0-9.]+), line \d+\)\Z")
_AT_LINE = re.compile(r" at line \d+, column \d+")
_UNRECOGNIZED = re.compile(r"\AUnrecognized flow entry \((.*?)\): (.*)\Z", re.DOTALL)
_INVALID = "Invalid flow file: "
_FOUND = re.compile(r"but found '(.*)'\Z")
_CHARACTER = re.compile(r"found character '(.*)' that cannot start any token")
_ALIAS = re.compile(r"found undefined alias '(.*)'")

INDENT_TODO = "Use spaces only, and put every item of one list (each `- `) in the same column"
STEP_TODO = "See docs/flows.md for every directive and its keys"
GENERAL_TODO = (
    "Check the indentation on and above this line (spaces only, one column per list), and put quotes "
    'around a value that holds ": " or " #" or starts with a character YAML reserves'
)


def explain_parse_error(exc: FlowParseError, text: str) -> Explained:
    """``exc`` (raised by the parser for ``text``) in plain words."""
    if exc.syntax is not None:
        return _syntax(exc.syntax, text)
    message = str(exc)
    unrecognized = _UNRECOGNIZED.match(message)
    if unrecognized is not None:
        step = _STEP_SUFFIX.search(message)
        where = f"step {step.group(1)}" if step is not None else "this step"
        detail = unrecognized.group(1)
        if detail == "step must be an object":
            return Explained(
                exc.line,
                f"{where} is plain text, not `<directive>: <value>`",
                "Write it as `- <directive>: <value>`, with a space after the colon (e.g. `- tap: Save`)",
            )
        return Explained(exc.line, f"{where}: {detail}", STEP_TODO)
    words = _AT_LINE.sub("", message.removeprefix(_INVALID))
    if words.startswith("expected an object with a steps array"):
        return Explained(
            exc.line,
            "the file is not a flow: a flow is a mapping with a `steps:` list",
            "Start the file with `steps:` and put each step on its own line beginning with `- ` "
            "(a dash and a space), e.g. `  - tap: Save`",
        )
    if words.startswith("duplicate key"):
        key = words.split("`")[1] if words.count("`") >= 2 else "a key"
        return Explained(
            exc.line,
            f"the key `{key}` is written twice in one mapping",
            "Keep one of them; if the second starts a new step, begin its line with `- `",
        )
    what, _, todo = words.partition(" — ")
    return Explained(exc.line, what, todo or "Fix this line and check the file again")


def _line_text(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _syntax(syntax: YamlSyntax, text: str) -> Explained:
    context, problem, line = syntax.context or "", syntax.problem or "", syntax.line
    opened = syntax.context_line
    found = _FOUND.search(problem)
    token = found.group(1) if found is not None else ""
    if token in ("}", "]"):
        return Explained(
            line,
            f"a closing `{token}` here has no opening `{'{' if token == '}' else '['}` before it",
            "Remove it, or add the opening bracket",
        )
    if "expected <block end>" in problem:
        ended = _block_end(token, line, opened, text)
        if ended is not None:
            return ended
    if problem == "mapping values are not allowed here":
        return Explained(
            line,
            'a value holds ": ", which YAML reads as the start of another key',
            'Put the value in quotes, e.g. echo: "Note: saved"',
        )
    if problem == "mapping keys are not allowed here":
        return Explained(line, 'a value holds "? ", which YAML reads as a key', "Put the value in quotes")
    if context == "while scanning a quoted scalar":
        return Explained(
            opened or line,
            "a quote opened on this line is never closed",
            "Close it with the same quote mark on the same line",
        )
    if context in ("while parsing a flow mapping", "while parsing a flow sequence"):
        bracket, close = ("{", "}") if "mapping" in context else ("[", "]")
        return Explained(
            opened or line,
            f"the `{bracket}` opened on this line is not closed where it should be"
            + (f" (line {line} goes on without a `,` or `{close}`)" if opened and opened != line else ""),
            f"Close it with `{close}` on the same line, and separate its entries with `, `",
        )
    character = _CHARACTER.search(problem)
    if character is not None:
        char = character.group(1)
        if char == "\\t":
            return Explained(
                line, "a tab character indents this line", "YAML indents with spaces only: replace it"
            )
        return Explained(
            line,
            f'a value begins with "{char}", which YAML reserves',
            f'Put the value in quotes, e.g. "{char}..."',
        )
    alias = _ALIAS.search(problem)
    if alias is not None:
        name = alias.group(1)
        return Explained(
            line,
            f"a value begins with `*`, which YAML reads as a reference to an anchor `&{name}` that the file lacks",
            f'Put the value in quotes: "*{name}"',
        )
    if context == "while scanning a simple key":
        return Explained(
            opened or line,
            "this line is neither `key: value` nor a list item",
            "Add the missing `: ` after the key, or begin the line with `- `, or join it to the line above",
        )
    if context == "while scanning a block scalar":
        return Explained(
            line,
            "a value begins with `|` or `>`, which starts a block of text that must end its line",
            "Put the value in quotes",
        )
    if "found another document" in problem:
        return Explained(
            line,
            "a `---` line starts a second YAML document",
            "A flow file holds one document: remove the `---`",
        )
    said = ", ".join(piece for piece in (context, problem) if piece)
    return Explained(line, f"the YAML cannot be read here ({said})", GENERAL_TODO)


def _block_end(token: str, line: int, opened: int | None, text: str) -> Explained | None:
    """The reader expected a block to end and found ``token``: mostly an indentation slip."""
    if token == "<block sequence start>":
        here = _indent(_line_text(text, line))
        return Explained(
            line,
            f"this list item (`- `) is indented by {here} space{'s' if here != 1 else ''}, which matches no "
            "list above it",
            f"{INDENT_TODO}: line it up with the items of its list"
            + (f" (the block that begins on line {opened})" if opened and opened != line else ""),
        )
    if token == "<block mapping start>":
        return Explained(
            line,
            "this key is indented differently from the keys above it",
            "Line it up with the other keys of the same step (spaces only), or indent it under the key it "
            "belongs to",
        )
    if token == "<scalar>":
        return Explained(
            line,
            "text follows a closing quote on this line",
            "Put the whole value inside one pair of quotes (inside '...' an apostrophe is written '')",
        )
    if token == "?":
        return Explained(
            line,
            "a `key: value` line stands where the list of steps goes on",
            "Begin it with `- ` to make it a step of its own, or indent it under the step it belongs to",
        )
    return None
