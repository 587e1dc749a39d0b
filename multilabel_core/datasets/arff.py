"""Mulan and MEKA ARFF files: readers and writers.

Both formats are Weka ARFF files whose attributes hold the features *and* the labels:

- **Mulan**: an ``NAME.xml`` file (namespace ``http://mulan.sourceforge.net/labels``)
  names the label attributes; they are matched by name wherever they sit in the
  attribute list.  ``Y``'s columns follow the attributes' order in the ARFF file.
- **MEKA**: the relation name carries ``-C L`` (the first L attributes are labels) or
  ``-C -L`` (the last L), e.g. ``@relation 'scene: -C 6'``.

Rows are dense (``v1,v2,...``) or sparse (``{index value,...}``, indices 0-based over
all attributes, strictly increasing, absent = 0, which for a nominal attribute means
its first value, as in Weka).  One file holds rows of one kind.  Sparse rows are read
straight into CSR arrays (memory proportional to the stored values).  ``sparse``
chooses what ``X`` is: ``"auto"`` (default) the file's own form, except that a sparse
file with more than :data:`~.storage.DENSE_ABOVE` of its feature entries stored comes
back dense; True always CSR; False always dense.

Fields are separated by commas, with spaces and tabs allowed around them; any other
whitespace character outside a quoted string or a comment is refused
(:mod:`._arff_syntax`).  The ``-C`` count of a MEKA relation is written in ASCII digits
0-9 after a space or a tab: ``-C \u0662`` (an Arabic-Indic two) is refused, not read as 2.

Attributes are numeric (``numeric``, ``real``, ``integer``) or nominal (``{a,b,...}``).
A nominal attribute whose two values are 0 and 1 (``{0,1}``, ``{1,0}``, ``{'0','1'}``)
is one numeric column holding the value itself, as Mulan, MEKA and scikit-multilearn
read it; every word indicator of the text benchmarks (enron, medical, bibtex, corel5k)
is declared so.  Other nominal features are encoded one-hot by default
(``nominal="onehot"``: one column per value, named ``attribute=value``) or by the
value's position (``nominal="ordinal"``: one column, 0 for the first declared value).
:class:`~._dataset.NominalFeature` records keep the encoding ("binary" for the 0/1 ones)
so that the writers restore the nominal attribute.  Label attributes must be numeric or
nominal with numeric values (``{0,1}``) and hold 0 or 1.

``%`` outside quotes starts a comment, on its own line or after a header line or a row.
Missing values (``?``) are refused with a ValueError naming the file, the line and the
attribute: the models of this package need complete data, and silent imputation would
change results without notice.  Every malformed file raises
:class:`~._files.DataFormatError` (a ValueError) whose message starts with
``PATH, line N:``.

Why a tokenizer of our own: ``scipy.io.arff`` reads no sparse rows, and the ``liac-arff``
package converts value by value in Python and reports no line numbers.  Here a row is
split with ``str.split`` (a regular expression only for rows holding quotes), all of a
file's values are converted by one numpy call, and sparse rows go straight into CSR
index arrays; errors are located afterwards, only when there is one.
"""

from __future__ import annotations

import re
import unicodedata
import xml.parsers.expat
from itertools import chain
from pathlib import Path
from xml.sax.saxutils import quoteattr

import attrs
import numpy as np
import scipy.sparse as sp

from ._arff_syntax import (
    Attribute,
    Header,
    free_spans,
    parse_header,
    quote,
    split_fields,
    split_sparse_entries,
    strip_comment,
)
from ._dataset import ENCODINGS, Dataset, NominalFeature
from ._files import (
    DataFormatError,
    blank_name,
    check_blanks,
    check_dense_size,
    dataset_name,
    format_number,
    read_text,
    strip_suffix,
    write_lines,
)
from ._rows import Entries, as_indices, as_numbers, cut, first_not_digits, row_starts, shown
from .storage import check_sparse, to_storage

__all__ = ["mulan_xml_path", "read_meka", "read_mulan", "write_meka", "write_mulan"]

MULAN_NAMESPACE = "http://mulan.sourceforge.net/labels"
_LABEL_VALUES = ("0", "1")
# ``-C``, a space or tab, an optional minus and ASCII digits, not followed by more of a word
# (``\w`` is Unicode here, so ``-C 2\u0662`` is not read as 2).  _MEKA_ANY_C finds every ``-C``
# written as an option, however its count is spelled, so that a misspelt one is reported.
_MEKA_CLASS_OPTION = re.compile(r"(?:^|[\s:'\"])-C[ \t]+(-?[0-9]+)(?![\w.])")
_MEKA_ANY_C = re.compile(r"(?:^|[\s:'\"])-C(?=\s|$)")


# ---------------------------------------------------------------- reading


def read_mulan(arff_path, xml_path=None, *, nominal: str = "onehot", sparse="auto", max_bytes=None) -> Dataset:
    """Read a Mulan dataset: ``arff_path`` and its XML label file.

    Parameters
    ----------
    arff_path : str or path-like
        The ARFF file (optionally ``.gz``).
    xml_path : str or path-like, optional
        The XML label file; by default the sibling ``NAME.xml`` (or ``NAME.xml.gz``) of
        ``NAME.arff[.gz]``.
    nominal : {"onehot", "ordinal"}, default="onehot"
        How nominal features are encoded into columns of X (see :class:`NominalFeature`).
    sparse : {"auto", True, False}, default="auto"
        Whether X comes back CSR or dense (module docstring).
    max_bytes : int or None, default=None
        Caps each file's text and each dense array built from it (Y, a densified X): see
        :func:`~._files.byte_cap`.

    Returns
    -------
    Dataset
        The dataset, with the XML's labels as Y's columns.

    Raises
    ------
    ValueError
        When no label file is given or found beside the ARFF file.
    DataFormatError
        For a malformed file, or a label the ARFF file has no attribute for.
    """
    _check_encoding(nominal)
    sparse = check_sparse(sparse)
    if xml_path is None:
        xml_path = mulan_xml_path(arff_path)
        if xml_path is None:
            raise ValueError(f"{arff_path}: no Mulan label file beside it (expected NAME.xml); pass xml_path")
    labels = _read_mulan_labels(xml_path, max_bytes)
    lines, header = _read_header(arff_path, max_bytes)
    position = {attribute.name: k for k, attribute in enumerate(header.attributes)}
    for label, line in labels:
        if label not in position:
            raise DataFormatError(xml_path, line, f"label {label!r} is not an attribute of {arff_path}")
    return _assemble(arff_path, lines, header, {position[label] for label, _ in labels}, nominal, sparse, max_bytes)


def read_meka(path, *, nominal: str = "onehot", sparse="auto", max_bytes=None) -> Dataset:
    """Read a MEKA dataset: the labels are named by ``-C L`` / ``-C -L`` in the relation name.

    Parameters
    ----------
    path : str or path-like
        The ARFF file (optionally ``.gz``).
    nominal : {"onehot", "ordinal"}, default="onehot"
        How nominal features are encoded into columns of X (see :class:`NominalFeature`).
    sparse : {"auto", True, False}, default="auto"
        Whether X comes back CSR or dense (module docstring).
    max_bytes : int or None, default=None
        Caps the file's text and each dense array built from it (Y, a densified X): see
        :func:`~._files.byte_cap`.

    Returns
    -------
    Dataset
        The dataset, named after the relation.

    Raises
    ------
    DataFormatError
        For a malformed file, or a relation name without a valid ``-C`` option (1 to d - 1 label
        attributes).
    """
    _check_encoding(nominal)
    sparse = check_sparse(sparse)
    lines, header = _read_header(path, max_bytes)
    n_attributes = len(header.attributes)
    where = header.relation_line or None
    try:
        count = meka_label_count(header.relation)
    except ValueError as exc:
        raise DataFormatError(path, where, str(exc)) from None
    if count is None:
        raise DataFormatError(
            path, where, f"relation name {header.relation!r} has no MEKA '-C L' option telling which attributes are "
            "labels (a Mulan file needs its XML label file instead)"
        )
    if count == 0 or abs(count) >= n_attributes:
        written = cut(_MEKA_CLASS_OPTION.findall(header.relation)[-1])
        raise DataFormatError(path, where, f"-C {written} must name between 1 and {n_attributes - 1} label attributes")
    first = 0 if count > 0 else n_attributes + count
    return _assemble(path, lines, header, set(range(first, first + abs(count))), nominal, sparse, max_bytes)


def meka_label_count(relation: str) -> int | None:
    """The L of the last ``-C L`` option in a MEKA relation name (negative: the last L), or None.

    ValueError when the last ``-C`` option's count is not ``-C``, a space or tab and ASCII
    digits (``-C \u0662``, ``-C\u00a02``, ``-C 2x``).
    """
    options = [match.start() for match in _MEKA_ANY_C.finditer(relation)]
    if not options:
        return None
    last = _MEKA_CLASS_OPTION.match(relation, options[-1])
    if last is None:
        raise ValueError(f"the MEKA option {_option_text(relation, options[-1])} {_misspelt(relation, options[-1])}")
    written = last[1]
    if len(written.lstrip("-")) > 18:
        # More labels than any file has attributes; and int() refuses texts over 4300 digits.
        return -(2**63) if written.startswith("-") else 2**63
    return int(written)


def _option_text(relation: str, start: int) -> str:
    """The ``-C`` option at ``start`` and the word after it, quoted, for an error message."""
    return shown(re.match(r"-C\s*\S*", relation[relation.index("-C", start):])[0], 24)


def _misspelt(relation: str, start: int) -> str:
    """What is wrong with the count of the ``-C`` option at ``start``."""
    rest = relation[relation.index("-C", start) + 2:]
    gap = len(rest) - len(rest.lstrip())
    blank = next((c for c in rest[:gap] if c not in " \t"), None)
    if blank is not None:
        return f"separates '-C' from its count by {blank_name(blank)}; only a space or a tab may"
    count = rest[gap:].split(None, 1)[0] if rest[gap:] else ""
    odd = next((c for c in count.lstrip("-") if not ("0" <= c <= "9")), None)
    if not count:
        return "has no count: write -C L (the first L attributes are labels) or -C -L (the last L)"
    if odd is not None and odd.isdigit():
        return (f"writes its count with {unicodedata.name(odd, 'a digit')} (U+{ord(odd):04X}); the count is "
                "written in ASCII digits 0-9")
    return "must be followed by a whole number of label attributes in ASCII digits 0-9 (-C L or -C -L)"


def mulan_xml_path(arff_path) -> Path | None:
    """Find the existing ``NAME.xml`` or ``NAME.xml.gz`` beside ``NAME.arff[.gz]``.

    Parameters
    ----------
    arff_path : str or path-like
        An ARFF file name.

    Returns
    -------
    pathlib.Path or None
        The label file, or None when the name does not end in ``.arff[.gz]`` or neither file
        exists.
    """
    stem = strip_suffix(arff_path, (".arff",))
    if stem is None:
        return None
    return next((Path(stem + suffix) for suffix in (".xml", ".xml.gz") if Path(stem + suffix).is_file()), None)


def _check_encoding(nominal: str) -> None:
    if nominal not in ENCODINGS:
        raise ValueError(f"nominal must be one of {ENCODINGS}, got {nominal!r}")


def _read_header(path, max_bytes=None) -> tuple[list[str], Header]:
    text = read_text(path, max_bytes)
    check_blanks(path, text, free_spans, "ARFF")
    lines = text.split("\n")
    del text
    return lines, parse_header(lines, path)


def _read_mulan_labels(xml_path, max_bytes=None) -> list[tuple[str, int]]:
    """(label name, line) for every ``<label name=...>`` element, nested ones included."""
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    elements: list[tuple[str, dict, int]] = []  # (name without namespace, attributes, line)
    parser.StartElementHandler = lambda tag, attributes: elements.append(
        (tag.rsplit(" ", 1)[-1], attributes, parser.CurrentLineNumber)
    )
    try:
        parser.Parse(read_text(xml_path, max_bytes), True)
    except xml.parsers.expat.ExpatError as exc:
        reason = f"malformed XML: {xml.parsers.expat.ErrorString(exc.code)}"
        raise DataFormatError(xml_path, exc.lineno, reason) from None
    root, _, root_line = elements[0]
    if root != "labels":
        raise DataFormatError(xml_path, root_line, f"root element is <{root}>, not <labels>")
    labels, seen = [], set()
    for tag, attributes, line in elements[1:]:
        if tag != "label":
            continue
        if "name" not in attributes:
            raise DataFormatError(xml_path, line, "<label> without a name attribute")
        if attributes["name"] in seen:
            raise DataFormatError(xml_path, line, f"label {attributes['name']!r} is declared twice")
        seen.add(attributes["name"])
        labels.append((attributes["name"], line))
    if not labels:
        raise DataFormatError(xml_path, None, "declares no <label> elements")
    return labels


@attrs.frozen
class _Table:
    """The data section as numbers, one column per attribute (nominal ones hold the value's position)."""

    values: np.ndarray | sp.csr_matrix
    lines: np.ndarray  # the file line of each row


def _parse_data(lines: list[str], header: Header, path) -> _Table:
    rows = [
        (index + 1, line)
        for index in range(header.data_start, len(lines))
        if (line := strip_comment(lines[index]).strip())
    ]
    if not rows:
        raise DataFormatError(path, None, "the @data section holds no rows")
    parse = _parse_sparse_rows if rows[0][1][0] == "{" else _parse_dense_rows
    return parse(rows, header, path)


def _mixed_rows(path, lineno: int) -> DataFormatError:
    return DataFormatError(path, lineno, "mixes dense and sparse rows; write all rows in one form")


def _parse_dense_rows(rows, header: Header, path) -> _Table:
    n_attributes = len(header.attributes)
    tokens: list[str] = []
    for lineno, line in rows:
        if line[0] == "{":
            raise _mixed_rows(path, lineno)
        if "'" in line or '"' in line:
            try:
                fields = split_fields(line)
            except ValueError as exc:
                raise DataFormatError(path, lineno, str(exc)) from None
        else:
            fields = line.split(",")
        if len(fields) != n_attributes:
            hint = " (truncated row?)" if len(fields) < n_attributes else ""
            raise DataFormatError(path, lineno, f"expected {n_attributes} values, found {len(fields)}{hint}")
        tokens.extend(fields)
    n = len(rows)
    entries = Entries(path, np.arange(0, n * n_attributes + 1, n_attributes), np.array([lineno for lineno, _ in rows]))
    values = _convert(tokens, np.tile(np.arange(n_attributes), n), header, entries)
    return _Table(values.reshape(n, n_attributes), entries.linenos)


def _parse_sparse_rows(rows, header: Header, path) -> _Table:
    index_tokens: list[str] = []
    value_tokens: list[str] = []
    counts = np.empty(len(rows), dtype=np.int64)
    for r, (lineno, line) in enumerate(rows):
        if line[0] != "{":
            raise _mixed_rows(path, lineno)
        if line[-1] != "}":
            raise DataFormatError(path, lineno, "sparse row has no closing '}' (truncated row?)")
        body = line[1:-1]
        if "'" in body or '"' in body:
            try:
                indices, values = split_sparse_entries(body)
            except ValueError as exc:
                raise DataFormatError(path, lineno, str(exc)) from None
        else:
            parts = body.replace(",", " ").split()
            if parts and len(parts) != 2 * (body.count(",") + 1):
                raise DataFormatError(path, lineno, "sparse entries must be 'index value' pairs separated by commas")
            indices, values = parts[0::2], parts[1::2]
        index_tokens.extend(indices)
        value_tokens.extend(values)
        counts[r] = len(indices)
    entries = Entries(path, row_starts(counts), np.array([lineno for lineno, _ in rows]))
    columns = _sparse_indices(index_tokens, len(header.attributes), entries)
    values = _convert(value_tokens, columns, header, entries)
    table = sp.csr_matrix((values, columns, entries.starts), shape=(len(rows), len(header.attributes)))
    table.eliminate_zeros()
    return _Table(table, entries.linenos)


def _sparse_indices(tokens: list[str], n_attributes: int, entries: Entries) -> np.ndarray:
    bad = first_not_digits(tokens)
    if bad is not None:
        raise entries.error(bad, f"sparse index {shown(tokens[bad])} is not a non-negative integer")
    indices, k = as_indices(tokens, n_attributes)
    if k is not None:
        raise entries.error(
            k, f"sparse index {cut(tokens[k])} is out of range: the file has {n_attributes} attributes "
            f"(indices 0..{n_attributes - 1})"
        )
    unordered = entries.first_unordered(indices)
    if unordered is not None:
        raise entries.error(unordered, "sparse indices must be strictly increasing")
    return indices


_NUMERIC, _BINARY, _NOMINAL = 0, 1, 2


def _convert(tokens, attribute_of: np.ndarray, header: Header, entries: Entries) -> np.ndarray:
    """Each token as a number (numeric attribute) or as its value's position (nominal attribute).

    ``attribute_of[k]`` is the attribute of token k.
    """
    attributes = header.attributes
    kinds = np.array(
        [_NUMERIC if not a.nominal else _BINARY if a.binary else _NOMINAL for a in attributes], dtype=np.int8
    )
    token_kind = kinds[attribute_of]
    if not token_kind.any():
        return _numbers(tokens, np.arange(len(tokens)), attribute_of, attributes, entries)
    tokens = np.array(tokens, dtype=object)
    values = np.empty(len(tokens))
    numeric = np.flatnonzero(token_kind == _NUMERIC)
    values[numeric] = _numbers(tokens[numeric], numeric, attribute_of, attributes, entries)
    # The text benchmarks declare every word indicator {0,1}: one vectorised pass for all of
    # them, instead of a dictionary look-up per token and a pass over the tokens per attribute.
    binary = np.flatnonzero(token_kind == _BINARY)
    values[binary] = _binary_positions(tokens[binary], binary, attribute_of, attributes, entries)
    for j in np.flatnonzero(kinds == _NOMINAL):
        where = np.flatnonzero(attribute_of == j)
        values[where] = _positions(tokens[where], where, attributes[j], entries)
    return values


def _binary_positions(tokens, where: np.ndarray, attribute_of: np.ndarray, attributes, entries: Entries):
    """The value positions of tokens of binary attributes (:attr:`Attribute.binary`)."""
    text = np.array(tokens, dtype=str) if len(tokens) else np.empty(0, dtype=str)
    ones = text == "1"
    valid = ones | (text == "0")
    if not valid.all():
        unsure = np.flatnonzero(~valid)
        stripped = np.char.strip(text[unsure])
        bad = unsure[(stripped != "0") & (stripped != "1")]
        if bad.size:
            k = bad[0]
            _positions(tokens[k:k + 1], where[k:k + 1], attributes[attribute_of[where[k]]], entries)
        ones[unsure] = stripped == "1"
    one_is_second = np.array([a.binary and a.values[1] == "1" for a in attributes])[attribute_of[where]]
    return (ones == one_is_second).astype(np.float64)


def _numbers(tokens, where: np.ndarray, attribute_of: np.ndarray, attributes, entries: Entries) -> np.ndarray:
    """One numpy conversion for all tokens (token k is entry ``where[k]``); on failure, report the first bad one."""
    values, bad = as_numbers(tokens)
    if values is not None:
        if np.all(np.isfinite(values)):
            return values
        bad = int(np.flatnonzero(~np.isfinite(values))[0])
    position = where[bad]
    name = attributes[attribute_of[position]].name
    token = str(tokens[bad]).strip()
    reason = (
        f"attribute {name!r}: missing value '?' (missing values are not supported; impute them before loading)"
        if token == "?"
        else f"attribute {name!r}: {shown(token)} is not a finite number"
    )
    raise entries.error(position, reason)


def _positions(tokens, where: np.ndarray, attribute: Attribute, entries: Entries) -> np.ndarray:
    """The position of each token among the attribute's declared values."""
    lookup = {value: k for k, value in enumerate(attribute.values)}
    positions = np.empty(len(tokens))
    for k, token in enumerate(tokens):
        position = lookup.get(token)
        if position is None:
            position = lookup.get(token.strip())
        if position is None:
            token = token.strip()
            if token == "?":
                reason = f"attribute {attribute.name!r}: missing value '?' (missing values are not supported)"
            elif attribute.label:
                reason = f"label {attribute.name!r} has value {token!r}; labels must be 0 or 1"
            else:
                declared = ", ".join(attribute.values)
                reason = f"attribute {attribute.name!r}: unknown nominal value {token!r} (declared: {declared})"
            raise entries.error(where[k], reason)
        positions[k] = position
    return positions


def _assemble(path, lines, header: Header, labels: set[int], nominal: str, sparse, max_bytes=None) -> Dataset:
    """Parse the rows and split them into X and Y; ``labels`` are the label attributes' positions."""
    header = attrs.evolve(
        header, attributes=tuple(attrs.evolve(a, label=k in labels) for k, a in enumerate(header.attributes))
    )
    table = _parse_data(lines, header, path)
    label_positions = sorted(labels)
    Y = _labels(table, header, label_positions, path, max_bytes)
    feature_positions = [k for k in range(len(header.attributes)) if k not in labels]
    if not feature_positions:
        raise DataFormatError(path, None, "every attribute is a label: no features left")
    X, names, nominal_features = _features(table.values, header, feature_positions, nominal, path, max_bytes)
    label_names = [header.attributes[k].name for k in label_positions]
    X = to_storage(X, sparse, path=path, max_bytes=max_bytes)
    return Dataset(X, Y, names, label_names, dataset_name(path), nominal_features)


def _column(values, position: int) -> np.ndarray:
    column = values[:, position]
    return column.toarray().ravel() if sp.issparse(column) else column


def _labels(table: _Table, header: Header, label_positions: list[int], path, max_bytes=None) -> np.ndarray:
    n = table.values.shape[0]
    # Sparse rows of a few bytes can declare thousands of label attributes: Y is the one dense part.
    check_dense_size(path, (n, len(label_positions)), 1, "the label matrix Y (int8)", max_bytes)
    Y = np.empty((n, len(label_positions)), dtype=np.int8)
    first_bad = None  # (row, label) of the first value other than 0 and 1, in file order
    for j, position in enumerate(label_positions):
        attribute = header.attributes[position]
        column = _column(table.values, position)
        if attribute.nominal:
            try:
                levels = np.array([float(value) for value in attribute.values])
            except ValueError:
                raise DataFormatError(
                    path, attribute.line, f"label attribute {attribute.name!r} must be numeric or nominal {{0,1}}"
                ) from None
            column = levels[column.astype(np.intp)]
        bad = np.flatnonzero((column != 0) & (column != 1))
        if bad.size and (first_bad is None or bad[0] < first_bad[0]):
            first_bad = (int(bad[0]), j, float(column[bad[0]]))
        Y[:, j] = column == 1
    if first_bad is not None:
        i, j, value = first_bad
        name = header.attributes[label_positions[j]].name
        raise DataFormatError(path, int(table.lines[i]), f"label {name!r} has value {value:g}; labels must be 0 or 1")
    return Y


def _features(values, header: Header, positions: list[int], nominal: str, path=None, max_bytes=None):
    """X's column blocks in attribute order: runs of numeric attributes, then each nominal one encoded."""
    sparse = sp.issparse(values)
    n = values.shape[0]
    if not sparse:
        # A few bytes of header can declare a nominal attribute of many values: dense one-hot
        # columns are the one part of a dense X the text does not bound.
        width = sum(
            len(a.values) if a.nominal and not a.binary and nominal == "onehot" else 1
            for a in (header.attributes[position] for position in positions)
        )
        check_dense_size(path, (n, width), 8, "the feature matrix X (float64)", max_bytes)
    blocks, names, nominal_features, run = [], [], [], []

    def flush_run():
        if run:
            blocks.append(values[:, run])
            run.clear()

    for position in positions:
        attribute = header.attributes[position]
        if not attribute.nominal:
            run.append(position)
            names.append(attribute.name)
            continue
        if attribute.binary:
            nominal_features.append(NominalFeature(attribute.name, attribute.values, (len(names),), "binary"))
            names.append(attribute.name)
            if attribute.values[0] == "0":
                # The table holds the value's position, here the value itself; and in a sparse
                # row an absent entry (position 0) is the value 0, so the column stays sparse.
                run.append(position)
                continue
            flush_run()
            column = (1.0 - _column(values, position))[:, None]
            blocks.append(sp.csr_matrix(column) if sparse else column)
            continue
        flush_run()
        codes = _column(values, position).astype(np.intp)
        start = len(names)
        if nominal == "onehot":
            width = len(attribute.values)
            onehot = sp.csr_matrix((np.ones(n), codes, np.arange(n + 1)), shape=(n, width))
            blocks.append(onehot if sparse else onehot.toarray())
            names.extend(f"{attribute.name}={value}" for value in attribute.values)
        else:
            width = 1
            column = codes[:, None].astype(np.float64)
            blocks.append(sp.csr_matrix(column) if sparse else column)
            names.append(attribute.name)
        nominal_features.append(NominalFeature(attribute.name, attribute.values, range(start, start + width), nominal))
    flush_run()
    X = sp.hstack(blocks, format="csr") if sparse else np.hstack(blocks)
    return X, names, nominal_features


# ---------------------------------------------------------------- writing


def write_mulan(dataset: Dataset, arff_path, xml_path=None, *, sparse: bool | None = None) -> None:
    """Write ``dataset`` as Mulan files: features then labels in ``arff_path``, label names in the XML.

    Numbers are written with ``repr`` precision, so reading the files back gives the same values.

    Parameters
    ----------
    dataset : Dataset
        The data to write.
    arff_path : str or path-like
        The ARFF file (name ending in ``.arff``, or ``.arff.gz`` for a gzipped one).
    xml_path : str or path-like, optional
        The label file; by default ``NAME.xml`` beside ``NAME.arff`` (``NAME.xml.gz`` beside
        ``NAME.arff.gz``).
    sparse : bool or None, default=None
        Whether rows are written in ARFF's sparse form; None: exactly when ``dataset.X`` is
        sparse.

    Raises
    ------
    ValueError
        When ``xml_path`` is not given and ``arff_path`` does not end in ``.arff[.gz]``.
    """
    if xml_path is None:
        stem = strip_suffix(arff_path, (".arff",))
        if stem is None:
            raise ValueError(f"{arff_path}: a Mulan ARFF file name ends in .arff (or .arff.gz); or pass xml_path")
        xml_path = stem + (".xml.gz" if str(arff_path).endswith(".gz") else ".xml")
    relation = dataset.name or dataset_name(arff_path)
    _write_arff(dataset, arff_path, relation, labels_first=False, sparse=sparse)
    label_lines = (f"<label name={quoteattr(name, _XML_ATTRIBUTE_ESCAPES)}></label>" for name in dataset.label_names)
    opening = ['<?xml version="1.0" encoding="utf-8"?>', f'<labels xmlns="{MULAN_NAMESPACE}">']
    write_lines(xml_path, chain(opening, label_lines, ["</labels>"]))


_XML_ATTRIBUTE_ESCAPES = {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def write_meka(dataset: Dataset, path, *, sparse: bool | None = None) -> None:
    """Write ``dataset`` as a MEKA file: labels first, relation ``'NAME: -C L'``.

    Parameters
    ----------
    dataset : Dataset
        The data to write; its name (else the file's stem) names the relation.
    path : str or path-like
        The ARFF file to write (gzipped when it ends in ``.gz``).
    sparse : bool or None, default=None
        Whether rows are written in ARFF's sparse form; None: exactly when ``dataset.X`` is
        sparse.
    """
    relation = f"{dataset.name or dataset_name(path)}: -C {dataset.n_labels}"
    _write_arff(dataset, path, relation, labels_first=True, sparse=sparse)


def _write_arff(dataset: Dataset, path, relation: str, *, labels_first: bool, sparse: bool | None) -> None:
    """Write the header, then the rows of a table with one column per attribute (see :class:`_Table`)."""
    features, feature_blocks = _feature_attributes(dataset)
    labels = [(name, _LABEL_VALUES) for name in dataset.label_names]
    attributes = labels + features if labels_first else features + labels
    names = [name for name, _ in attributes]
    if len(set(names)) != len(names):
        duplicate = next(name for name in names if names.count(name) > 1)
        raise ValueError(
            f"ARFF attribute names must be distinct; {duplicate!r} names two attributes (a feature and a label?)"
        )
    blocks = [dataset.Y, *feature_blocks] if labels_first else [*feature_blocks, dataset.Y]
    sparse = dataset.is_sparse if sparse is None else sparse
    if sparse:
        table = sp.hstack([sp.csr_matrix(block, dtype=np.float64) for block in blocks], format="csr")
        rows = _sparse_rows(table, attributes)
    else:
        rows = _dense_rows(np.hstack([_dense(block) for block in blocks]), attributes)
    header = [f"@relation {quote(relation)}", ""]
    header += [f"@attribute {quote(name)} {_type_text(values)}" for name, values in attributes]
    header += ["", "@data"]
    write_lines(path, chain(header, rows))


def _dense(block) -> np.ndarray:
    return block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)


def _type_text(values: tuple[str, ...] | None) -> str:
    return "numeric" if values is None else "{" + ",".join(quote(value) for value in values) + "}"


def _feature_attributes(dataset: Dataset):
    """The source attributes behind X's columns, as (name, nominal values or None), and X's blocks.

    Runs of numeric columns are sliced from X as they are; each nominal feature's
    columns are folded back into one column of value positions.
    """
    by_start = {feature.columns[0]: feature for feature in dataset.nominal_features}
    attributes, blocks, run_start, j = [], [], None, 0
    in_run = []  # binary {0,1} features written from the numeric runs: their value is their position
    while j < dataset.n_features:
        feature = by_start.get(j)
        if feature is None or (feature.encoding == "binary" and feature.values[0] == "0"):
            attributes.append((dataset.feature_names[j], None) if feature is None else (feature.name, feature.values))
            if feature is not None:
                in_run.append(feature)
            run_start = j if run_start is None else run_start
            j += 1
            continue
        if run_start is not None:
            blocks.append(dataset.X[:, run_start:j])
            run_start = None
        encoded = _dense(dataset.X[:, feature.columns[0]:feature.columns[-1] + 1])
        attributes.append((feature.name, feature.values))
        blocks.append(_value_positions(feature, encoded)[:, None])
        j += len(feature.columns)
    if run_start is not None:
        blocks.append(dataset.X[:, run_start:])
    _check_binary_columns(dataset.X, in_run)
    return attributes, blocks


def _check_binary_columns(X, features) -> None:
    """ValueError unless every column of these binary features holds only 0 and 1."""
    if not features:
        return
    columns = np.array([feature.columns[0] for feature in features])
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        stored = np.isin(X.indices, columns)
        bad = np.flatnonzero(stored & (X.data != 0) & (X.data != 1))
        if not bad.size:
            return
        row = int(np.searchsorted(X.indptr, bad[0], side="right") - 1)
        column = int(X.indices[bad[0]])
    else:
        block = X[:, columns]
        bad = np.argwhere((block != 0) & (block != 1))
        if not bad.size:
            return
        row, column = int(bad[0][0]), int(columns[bad[0][1]])
    name = next(feature.name for feature in features if feature.columns[0] == column)
    raise ValueError(f"nominal feature {name!r}: row {row} does not encode one of its values (binary)")


def _value_positions(feature: NominalFeature, block: np.ndarray) -> np.ndarray:
    """Each row's value position, from its one-hot or ordinal columns; ValueError when a row encodes none."""
    if feature.encoding == "onehot":
        valid = np.all((block == 0) | (block == 1), axis=1) & (block.sum(axis=1) == 1)
        positions = block.argmax(axis=1).astype(np.float64)
    elif feature.encoding == "binary":
        valid = (block[:, 0] == 0) | (block[:, 0] == 1)
        positions = block[:, 0] if feature.values[0] == "0" else 1.0 - block[:, 0]
    else:
        positions = block[:, 0]
        valid = (positions == np.round(positions)) & (positions >= 0) & (positions < len(feature.values))
    if not valid.all():
        row = int(np.flatnonzero(~valid)[0])
        raise ValueError(
            f"nominal feature {feature.name!r}: row {row} does not encode one of its values ({feature.encoding})"
        )
    return positions


def _formatter(values: tuple[str, ...] | None):
    if values is None:
        return format_number
    quoted = [quote(value) for value in values]
    return lambda position: quoted[int(position)]


def _dense_rows(table: np.ndarray, attributes):
    texts = [list(map(_formatter(values), table[:, j].tolist())) for j, (_, values) in enumerate(attributes)]
    return map(",".join, zip(*texts))


def _sparse_rows(table: sp.csr_matrix, attributes):
    table.sum_duplicates()
    table.eliminate_zeros()
    formatters = [_formatter(values) for _, values in attributes]
    entries = [f"{j} {formatters[j](v)}" for j, v in zip(table.indices.tolist(), table.data.tolist())]
    bounds = table.indptr.tolist()
    return ("{" + ",".join(entries[a:b]) + "}" for a, b in zip(bounds[:-1], bounds[1:]))
