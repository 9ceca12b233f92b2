"""A user's table as JSON text, restored exactly: how uploads are stored, never pickled.

A value read back can therefore never run code, and floats keep every digit:
they are written with Python's shortest round-trip ``repr`` (pandas'
``to_json`` keeps at most 15 significant digits).  Each column's dtype is
recorded, so integer, float, boolean and text columns come back as such;
missing cells are ``null``, infinities the text ``"inf"``/``"-inf"`` (JSON has
no infinities).

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"a": [1, 2], "b": [0.1, float("nan")], "c": ["x", None]})
>>> back = table_from_json(table_to_json(df))
>>> back.dtypes.tolist() == df.dtypes.tolist(), back["b"].isna().tolist()
(True, [False, True])
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

__all__ = ["TABLE_FORMAT", "table_to_json", "table_from_json"]

#: The format tag written in every table; another tag is refused.
TABLE_FORMAT = "varimp-table/1"


def _cell(v):
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)  # "inf" / "-inf" as text: JSON has no infinities
    if isinstance(v, (bool, int, float, str)):
        return v
    if v is pd.NA or v is pd.NaT:
        return None
    return str(v)


def table_to_json(df: pd.DataFrame) -> str:
    """Serialise a DataFrame to JSON text that :func:`table_from_json` restores exactly.

    Floats are written with Python's shortest round-trip repr (pandas'
    ``to_json`` keeps at most 15 significant digits), and each column's dtype
    is recorded so integer, float, boolean and text columns come back as such;
    ``df.attrs["notes"]`` (what :func:`~varimp_core.data.csvfile.read_csv_bytes`
    noticed) comes back too.
    """
    cols = [str(c) for c in df.columns]
    if len(set(cols)) != len(cols):
        raise ValueError("Column names must be unique.")
    data, dtypes = [], []
    for c in df.columns:
        s = df[c]
        kind = s.dtype.kind if isinstance(s.dtype, np.dtype) else "O"
        if kind in "iub" and isinstance(s.dtype, np.dtype):
            dtypes.append(str(s.dtype))
            data.append(s.tolist())
        elif kind == "f":
            dtypes.append(str(s.dtype))
            data.append([None if math.isnan(v) else (repr(v) if math.isinf(v) else v)
                         for v in s.astype(float).tolist()])
        else:
            dtypes.append("text")
            data.append([_cell(v) for v in s.tolist()])
    obj = {"format": TABLE_FORMAT, "columns": cols, "dtypes": dtypes, "data": data}
    if df.attrs.get("notes"):   # what reading the file noticed, for the prepared data's notes
        obj["notes"] = [str(n) for n in df.attrs["notes"]]
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def table_from_json(text: str) -> pd.DataFrame:
    """Inverse of :func:`table_to_json`."""
    obj = json.loads(text)
    if obj.get("format") != TABLE_FORMAT:
        raise ValueError("Not a varimp table.")
    out = {}
    for name, dtype, values in zip(obj["columns"], obj["dtypes"], obj["data"]):
        if dtype == "text":
            out[name] = pd.Series(values)  # pandas infers str (or object for mixed cells)
        elif dtype.startswith("float"):
            out[name] = pd.Series([np.nan if v is None else float(v) for v in values], dtype=dtype)
        else:
            out[name] = pd.Series(values, dtype=dtype)
    frame = pd.DataFrame(out, columns=obj["columns"])
    frame.attrs["notes"] = list(obj.get("notes", []))
    return frame
