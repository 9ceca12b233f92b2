"""Reading uploaded CSV files: size, encoding, delimiter and shape checks.

Every refusal is a :class:`DataError` (a ``ValueError``) whose message is one
sentence naming the problem and what to do about it.  :mod:`varimp_core.data.prepare`
re-exports the reading functions, its callers' entry point.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import csv
import io
import os
import re
from collections import Counter

import numpy as np
import pandas as pd

__all__ = ["DataError", "decode_upload", "load_csv", "read_csv_bytes"]

_DELIMITERS = (",", ";", "\t", "|")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_HIGH_BYTES = bytes(range(0x80, 0x100))
_SEP_LINE = re.compile(r"sep=([,;\t|])[ ]*(?:\r\n|\r|\n)")  # Excel's delimiter hint
# A number with a decimal comma (and optional dots between thousands): "3,14", "-1.234,5".
_COMMA_NUMBER = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})*,\d+|[+-]?\d+,\d+")
_WHOLE_NUMBER = re.compile(r"[+-]?\d+")


class DataError(ValueError):
    """A table or file that cannot be used, with a sentence saying what to do."""


def check_cells(n_rows: int, n_columns: int, max_cells: int | None) -> None:
    """Refuse a table of more than ``max_cells`` cells (None: no limit)."""
    cells = n_rows * n_columns
    if max_cells is not None and cells > max_cells:
        raise DataError(f"The table has {cells:,} cells ({n_rows:,} rows x {n_columns:,} "
                        f"columns), more than the limit of {max_cells:,}; use fewer rows or "
                        "columns.")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024**2:.1f} MB" if n >= 1024**2 else f"{n / 1024:.1f} kB"


def quoted_names(names, limit: int = 10) -> str:
    names = [repr(str(n)) for n in names]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def plain_value(value):
    """A plain Python value for messages (no ``np.float64(...)``)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and len(value) > 60:
        value = value[:57] + "..."
    return value


# -- reading files -------------------------------------------------------------
def decode_upload(contents: str) -> bytes:
    """Bytes of a Dash ``dcc.Upload`` value (``"data:<type>;base64,<data>"``).

    Raises
    ------
    DataError
        When the value is not base64 data.
    """
    data = str(contents)
    if data.startswith("data:"):
        data = data.partition(",")[2]
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise DataError("The upload could not be decoded (it is not base64 data); "
                        "upload the file again.") from None


def _decode(content: bytes) -> str:
    """Decode text bytes, refusing binary files."""
    binary = DataError("The file looks binary (for example an Excel workbook), not CSV "
                       "text; save it as CSV (comma-separated values) and upload that.")
    utf16 = _utf16_without_bom(content)
    if content.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or utf16:
        try:
            text = content.decode(utf16 or "utf-16")
        except UnicodeDecodeError:
            raise DataError("The file starts like UTF-16 text but is not valid UTF-16 (it "
                            "may be cut short); save it again as CSV UTF-8 and upload "
                            "that.") from None
    elif b"\x00" in content:
        raise binary
    else:
        try:
            text = content.decode("utf-8-sig")
        except UnicodeDecodeError:
            # Latin-1 decodes any bytes, so accept it only for text-like content.
            high = (len(content) - len(content.translate(None, _HIGH_BYTES))) / len(content)
            if high > 0.3:
                raise binary from None
            try:
                text = content.decode("cp1252")
            except UnicodeDecodeError:
                text = content.decode("latin-1")
    if len(_CONTROL.findall(text)) > max(2, len(text) // 1000):
        raise binary
    return text


def _utf16_without_bom(content: bytes) -> str | None:
    """``"utf-16-le"``/``"utf-16-be"`` for mostly-ASCII UTF-16 text without a BOM, else None."""
    if len(content) < 4 or len(content) % 2:
        return None
    even, odd = content[0::2], content[1::2]
    n = len(odd)
    if odd.count(0) > 0.9 * n and even.count(0) < 0.1 * n:
        return "utf-16-le"
    if even.count(0) > 0.9 * n and odd.count(0) < 0.1 * n:
        return "utf-16-be"
    return None


def _sniff_delimiter(text: str) -> str:
    """The delimiter that splits the first lines into the most, consistent, fields."""
    lines = [ln for ln in text.splitlines()[:50] if ln.strip()][:20]
    best, best_score = ",", (False, 1)
    for d in _DELIMITERS:
        try:
            counts = [len(r) for r in csv.reader(lines, delimiter=d)]
        except csv.Error:
            continue
        if not counts:
            continue
        score = (len(set(counts)) == 1, counts[0])
        if counts[0] > 1 and score > best_score:
            best, best_score = d, score
    return best


def _is_number(field: str) -> bool:
    try:
        float(field.strip().replace(",", "."))
    except ValueError:
        return False
    return bool(field.strip())


def _check_rows(text: str, delimiter: str, max_columns: int | None,
                max_name_length: int | None) -> tuple[list[str], bool]:
    """Return the header and whether the file has none; refuse ragged rows, duplicate names
    and a header past the limits.

    A first row of numbers only is no header (a file written without one, issue #26): the
    columns are named ``col1`` .. ``colN`` and that row is data.
    """
    # newline="": the reader splits \n, \r\n and lone \r line ends, outside quotes only.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter,
                        skipinitialspace=True)
    header, n_rows, headerless = None, 0, False
    try:
        for row in reader:
            if not row or len(row) == 1 and not row[0].strip():
                continue
            if header is None:
                header = [f.strip() for f in row]
                _check_header(header, max_columns, max_name_length)
                if all(_is_number(f) for f in header):
                    headerless = True
                    header = [f"col{i + 1}" for i in range(len(header))]
                    n_rows += 1
                continue
            n_rows += 1
            if len(row) != len(header):
                raise DataError(
                    f"Line {reader.line_num} has {len(row)} fields but the header has "
                    f"{len(header)}; fix that row or quote values that contain "
                    f"{delimiter!r}.")
    except csv.Error as exc:
        if "field limit" in str(exc):
            raise DataError(f"A value near line {reader.line_num} is longer than "
                            f"{csv.field_size_limit():,} characters; check the file's "
                            "quotes (an unclosed quote turns the rest of the file into one "
                            "value).") from None
        raise DataError(f"The file could not be parsed as CSV near line {reader.line_num} "
                        f"({exc}); check its quotes and delimiters.") from None
    if header is None:
        raise DataError("The file has no columns; upload a CSV file with a header row.")
    named = [h for h in header if h]
    dupes = sorted(h for h, k in Counter(named).items() if k > 1)
    if dupes:
        verb = "appear" if len(dupes) > 1 else "appears"
        raise DataError(f"Column name{'s' if len(dupes) > 1 else ''} {quoted_names(dupes)} "
                        f"{verb} more than once in the header; rename the columns so "
                        "every name is unique.")
    if n_rows == 0:
        raise DataError("The file has a header but no data rows; upload a file with at "
                        "least one row of data.")
    return header, headerless


def _check_header(header: list[str], max_columns: int | None,
                  max_name_length: int | None) -> None:
    if max_columns is not None and len(header) > max_columns:
        raise DataError(f"The file has {len(header):,} columns, more than the limit of "
                        f"{max_columns:,}; keep fewer columns.")
    for i, name in enumerate(header):
        if max_name_length is not None and len(name) > max_name_length:
            raise DataError(f"The name of column {i + 1} is {len(name):,} characters long; "
                            f"shorten column names to at most {max_name_length} characters.")


def read_csv_bytes(content: bytes, *, max_bytes: int | None = None,
                   max_cells: int | None = None, max_columns: int | None = None,
                   max_name_length: int | None = None) -> pd.DataFrame:
    """Parse the bytes of an uploaded CSV file.

    Parameters
    ----------
    content : bytes
        The file.  UTF-8 (with or without BOM), UTF-16 (with BOM, or without
        one for mostly-ASCII text), Windows-1252 and Latin-1 texts are
        accepted; the delimiter (``,``, ``;``, tab or ``|``) is detected, or
        read from an Excel ``sep=;`` first line.  Unnamed, empty columns (from
        trailing delimiters) are dropped.  With a delimiter other than ``,``,
        a text column whose values are nearly all numbers (at least
        :data:`DECIMAL_COMMA_SHARE` of those present), some written with a
        decimal comma (``3,14``, ``1.234,5``), is read as numbers, its other
        values as missing.
    max_bytes, max_cells, max_columns, max_name_length : int, default=None
        Limits of the caller (a shared server passes its own, see
        ``pages/_server/limits.py``): bytes of the file, cells (rows x columns),
        columns, characters of a column name.  None: no limit; the core itself
        refuses no size.

    Returns
    -------
    frame : pandas.DataFrame
        Columns named by the (stripped) header, types inferred by pandas;
        ``frame.attrs["notes"]`` lists sentences about what was read (decimal
        commas).

    Raises
    ------
    DataError
        When the file is too large, empty, binary or undecodable, has ragged
        rows, duplicate column names, no columns or no data rows, or passes a
        limit given.
    """
    if isinstance(content, str):
        content = content.encode("utf-8")
    try:
        content = bytes(content)
    except TypeError:
        raise DataError(f"Expected the bytes of a CSV file, got {type(content).__name__}; "
                        "pass the file's content.") from None
    limit = max_bytes
    if limit is not None and len(content) > limit:
        size, most = _size(len(content)), _size(limit)
        if size == most:  # "5.0 MB, larger than 5.0 MB" needs the bytes
            size += f" ({len(content):,} bytes)"
            most += f" ({limit:,} bytes)"
        raise DataError(f"The file is {size}, larger than the limit of {most}; upload a "
                        "smaller file (fewer rows or columns).")
    if not content.strip():
        raise DataError("The file is empty; upload a CSV file with a header row and at "
                        "least one data row.")
    text = _decode(content)
    if not text.strip():
        raise DataError("The file is empty; upload a CSV file with a header row and at "
                        "least one data row.")
    hint = _SEP_LINE.match(text)
    if hint:  # Excel's "sep=;" first line names the delimiter
        delimiter, text = hint.group(1), text[hint.end():]
    else:
        delimiter = _sniff_delimiter(text)
    header, headerless = _check_rows(text, delimiter, max_columns, max_name_length)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, index_col=False,
                            skipinitialspace=True, low_memory=False,
                            **({"header": None, "names": header} if headerless else {}))
    except pd.errors.EmptyDataError:
        raise DataError("The file has no columns; upload a CSV file with a header "
                        "row.") from None
    except Exception as exc:  # pandas' ParserError and friends
        line = re.search(r"line (\d+)", str(exc))
        where = f" near line {line.group(1)}" if line else ""
        raise DataError(f"The file could not be parsed as CSV{where}; check its quotes "
                        "and delimiters.") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    # Trailing delimiters make unnamed, empty columns: drop them.
    empty = [i for i, name in enumerate(header[:frame.shape[1]])
             if not name and frame.iloc[:, i].isna().all()]
    if empty:
        frame = frame.iloc[:, [i for i in range(frame.shape[1]) if i not in empty]]
    if frame.shape[1] == 0:
        raise DataError("The file has no columns; upload a CSV file with a header row.")
    check_cells(frame.shape[0], frame.shape[1], max_cells)
    notes = _decimal_commas(frame) if delimiter != "," else []
    if headerless:
        notes.insert(0, f"The first row holds only numbers, so it was read as data and the "
                        f"{len(header)} columns were named col1 to col{len(header)}; add a "
                        "header row to name them.")
    frame.attrs["notes"] = notes
    return frame


#: Least share of a column's values present that must be numbers for a decimal-comma
#: column: the rest (a stray "?" or "n/a") are read as missing and said.
DECIMAL_COMMA_SHARE = 0.9


def _decimal_commas(frame: pd.DataFrame) -> list[str]:
    """Read text columns of numbers written with decimal commas as numbers, in place.

    A column qualifies when at least :data:`DECIMAL_COMMA_SHARE` of the values
    present are whole numbers or numbers with a decimal comma, and at least one
    has the comma.  Its other values (``"?"``, ``"n/a"``) become missing.
    Returns one sentence naming the columns read so, and one per column whose
    values became missing, with their count and the first of them.
    """
    converted, lost = [], []
    for c in frame.columns:
        s = frame[c]
        if not (s.dtype == object or pd.api.types.is_string_dtype(s.dtype)):
            continue
        present = s.dropna().astype(str).str.strip()
        comma = present.str.fullmatch(_COMMA_NUMBER.pattern)
        number = comma | present.str.fullmatch(_WHOLE_NUMBER.pattern)
        if not len(present) or not comma.any() or number.mean() < DECIMAL_COMMA_SHARE:
            continue
        numbers = present[number].str.replace(".", "", regex=False).str.replace(
            ",", ".", regex=False)
        frame[c] = pd.to_numeric(numbers).reindex(s.index)
        converted.append(c)
        if not number.all():
            lost.append((c, present[~number].tolist()))
    if not converted:
        return []
    plural = len(converted) > 1
    notes = [f"Column{'s' if plural else ''} {quoted_names(converted)} "
             f"{'are' if plural else 'is'} numbers written with a decimal comma "
             f"(\"3,14\"), read as numbers."]
    for c, words in lost:
        k = len(words)
        shown = quoted_names(list(dict.fromkeys(words)), limit=3)
        notes.append(f"In {c!r}, {k:,} value{'s' if k != 1 else ''} that "
                     f"{'are' if k != 1 else 'is'} not a number ({shown}) "
                     f"{'are' if k != 1 else 'is'} read as missing.")
    return notes


def load_csv(path_or_buffer, **kw) -> pd.DataFrame:
    """Read a CSV file from a path or a file-like object.

    Parameters
    ----------
    path_or_buffer : str, os.PathLike or file-like
        File to read; a file-like object may return bytes or text.
    **kw
        Passed to :func:`read_csv_bytes` (``max_bytes``, ``max_cells``).

    Returns
    -------
    frame : pandas.DataFrame

    Raises
    ------
    DataError
        When the file cannot be read, or for any reason listed in
        :func:`read_csv_bytes`.
    """
    if hasattr(path_or_buffer, "read"):
        try:
            content = path_or_buffer.read()
        except Exception as exc:
            raise DataError(f"The file could not be read ({exc}); try again.") from None
        return read_csv_bytes(content, **kw)
    path = os.fspath(path_or_buffer)
    limit = kw.get("max_bytes")
    try:
        size = os.path.getsize(path)
        if limit is not None and size > limit:
            raise DataError(f"The file is {_size(size)}, larger than the limit of "
                            f"{_size(limit)}; use a smaller file (fewer rows or columns).")
        with open(path, "rb") as fh:
            content = fh.read()
    except OSError as exc:
        raise DataError(f"Could not read {path!r} ({exc.strerror or exc}); check the "
                        "path.") from None
    return read_csv_bytes(content, **kw)
