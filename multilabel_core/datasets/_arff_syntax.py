"""ARFF syntax: comments, quoting, comma-separated fields, and the header.

The rules followed are Weka's: keywords (``@relation``, ``@attribute``, ``@data``, the
type names) are case-insensitive; ``%`` outside quotes starts a comment that runs to the
end of the line; a name or value containing blanks, commas, quotes, braces or ``%`` is
written between single (or double) quotes, with a backslash escaping the quote
character, the backslash itself, and ``\\n``, ``\\r``, ``\\t``.

Blanks are spaces and tabs.  The ARFF documentation calls the file ASCII text and shows no
other separator; Weka's own tokenizer also takes the other ASCII control characters (a vertical
tab, a form feed) as blanks, but not a no-break space, which it reads as part of a word, while
Python's ``str.split`` takes all of them as blanks.  So any whitespace character but a space or
a tab outside a quoted string or a comment is refused (:func:`free_spans` says where it may
stand): a file is read as Weka reads it or not at all.
"""

from __future__ import annotations

import re

import attrs

from ._files import DataFormatError

NUMERIC_TYPES = ("numeric", "real", "integer")
UNSUPPORTED_TYPES = ("string", "date", "relational")
BINARY_VALUES = frozenset(("0", "1"))

# A field is a single- or double-quoted string (backslash escapes inside) or a run of
# characters without commas or quotes; surrounding blanks are not part of it.
_FIELD = re.compile(
    r"""[ \t]*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,'"]*?))[ \t]*(,|$)""",
    re.DOTALL,
)
# A sparse entry: an attribute index, blanks, and a quoted or bare value.
_SPARSE_ENTRY = re.compile(
    r"""[ \t]*(\d+)[ \t]+(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,'"\s]+))[ \t]*(,|$)""",
    re.DOTALL,
)
_QUOTED = re.compile(r"""'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)\"""", re.DOTALL)
_QUOTED_OR_COMMENT = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|%""", re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPED_CHARS = {"n": "\n", "r": "\r", "t": "\t"}
_TO_ESCAPE = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Names made of these characters only are written without quotes.
_BARE = re.compile(r"[\w.\-+=/:()\[\]<>#!$&*^~|;@]+")


def strip_comment(line: str) -> str:
    """``line`` without its comment: from the first ``%`` outside quotes to the end."""
    if "%" not in line:
        return line
    for match in _QUOTED_OR_COMMENT.finditer(line):
        if match[0] == "%":
            return line[: match.start()]
    return line


def free_spans(line: str) -> list[tuple[int, int]]:
    """The column ranges of ``line`` where any character may stand: its quoted strings and its comment."""
    spans = []
    if "'" not in line and '"' not in line and "%" not in line:
        return spans
    for match in _QUOTED_OR_COMMENT.finditer(line):
        if match[0] == "%":
            spans.append((match.start(), len(line)))
            break
        spans.append(match.span())
    return spans


def unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPED_CHARS.get(m[1], m[1]), text)


def quote(text: str) -> str:
    """``text`` as an ARFF name or nominal value: bare when safe, else single-quoted."""
    if _BARE.fullmatch(text) and text != "?":
        return text
    return "'" + "".join(_TO_ESCAPE.get(c, c) for c in text) + "'"


def split_fields(text: str) -> list[str]:
    """Split a comma-separated ARFF list, honouring quotes; quoted fields come back unescaped.

    Raises ValueError (without a location: callers add the file and line) on an
    unbalanced quote or text glued to a quoted field.
    """
    fields, pos = [], 0
    while True:
        match = _FIELD.match(text, pos)
        if match is None:
            raise ValueError(f"unbalanced quote or stray character near column {pos + 1}: {text[pos:pos + 30]!r}")
        single, double, plain, separator = match.groups()
        fields.append(unescape(single) if single is not None else unescape(double) if double is not None else plain)
        if not separator:
            return fields
        pos = match.end()


def split_sparse_entries(body: str) -> tuple[list[str], list[str]]:
    """``3 'a b', 7 1.5`` -> (["3", "7"], ["a b", "1.5"]): the general path for rows with quotes."""
    indices, values, pos = [], [], 0
    if not body.strip():
        return indices, values
    while True:
        match = _SPARSE_ENTRY.match(body, pos)
        if match is None:
            raise ValueError(f"expected 'index value' near column {pos + 2}: {body[pos:pos + 30]!r}")
        index, single, double, bare, separator = match.groups()
        indices.append(index)
        values.append(unescape(single) if single is not None else unescape(double) if double is not None else bare)
        if not separator:
            return indices, values
        pos = match.end()


@attrs.frozen
class Attribute:
    """One ``@attribute``: its name, its nominal values (None when numeric), its line.

    ``label`` is set by the dataset format (Mulan's XML file, MEKA's ``-C``), not by the header.
    """

    name: str
    values: tuple[str, ...] | None
    line: int
    label: bool = False

    @property
    def nominal(self) -> bool:
        return self.values is not None

    @property
    def binary(self) -> bool:
        """A nominal attribute whose two values are 0 and 1 (either order, quoted or not).

        Mulan, MEKA and scikit-multilearn read such an attribute as one numeric 0/1
        column; the text benchmarks declare every word indicator this way.
        """
        return self.values is not None and len(self.values) == 2 and set(self.values) == BINARY_VALUES


@attrs.frozen
class Header:
    """The parsed header of an ARFF file; ``data_start`` is the 0-based index of the line after ``@data``."""

    relation: str
    relation_line: int
    attributes: tuple[Attribute, ...]
    data_start: int


def parse_header(lines: list[str], path) -> Header:
    relation, relation_line, attributes, names = "", 0, [], set()
    for index, raw in enumerate(lines):
        line = strip_comment(raw).strip()
        if not line:
            continue
        lineno = index + 1
        keyword, *rest = line.split(None, 1)
        keyword, rest = keyword.lower(), rest[0] if rest else ""
        if keyword == "@relation":
            relation, relation_line = _parse_name(rest, path, lineno)[0], lineno
        elif keyword == "@attribute":
            attribute = _parse_attribute(rest, path, lineno)
            if attribute.name in names:
                raise DataFormatError(path, lineno, f"attribute {attribute.name!r} is declared twice")
            names.add(attribute.name)
            attributes.append(attribute)
        elif keyword == "@data":
            if not attributes:
                raise DataFormatError(path, lineno, "@data before any @attribute")
            return Header(relation, relation_line, tuple(attributes), index + 1)
        else:
            raise DataFormatError(path, lineno, f"expected @relation, @attribute or @data, got {line[:40]!r}")
    raise DataFormatError(path, None, "no @data section: the file is not ARFF or the header is truncated")


def _parse_name(text: str, path, lineno: int) -> tuple[str, str]:
    """A leading (possibly quoted) name and the rest of the text."""
    if not text:
        raise DataFormatError(path, lineno, "missing name")
    if text[0] in "'\"":
        match = _QUOTED.match(text)
        if match is None:
            raise DataFormatError(path, lineno, f"unterminated quoted name {text[:40]!r}")
        quoted = match[1] if match[1] is not None else match[2]
        return unescape(quoted), text[match.end():]
    end = re.search(r"[\s{]", text)
    return (text, "") if end is None else (text[: end.start()], text[end.start():])


def _parse_attribute(text: str, path, lineno: int) -> Attribute:
    name, kind = _parse_name(text, path, lineno)
    kind = kind.strip()
    if kind.startswith("{"):
        if not kind.endswith("}"):
            raise DataFormatError(path, lineno, f"nominal attribute {name!r}: missing closing '}}'")
        try:
            values = tuple(split_fields(kind[1:-1]))
        except ValueError as exc:
            raise DataFormatError(path, lineno, f"nominal attribute {name!r}: {exc}") from None
        if "" in values:
            raise DataFormatError(path, lineno, f"nominal attribute {name!r} has an empty value list or value")
        if len(set(values)) != len(values):
            raise DataFormatError(path, lineno, f"nominal attribute {name!r} lists a value twice")
        return Attribute(name, values, lineno)
    lowered = kind.lower()
    if lowered in NUMERIC_TYPES:
        return Attribute(name, None, lineno)
    if lowered.split(" ", 1)[0] in UNSUPPORTED_TYPES:
        raise DataFormatError(
            path, lineno, f"attribute {name!r} has type {kind!r}; only numeric and nominal attributes are supported"
        )
    raise DataFormatError(path, lineno, f"attribute {name!r} has unknown type {kind!r}")
