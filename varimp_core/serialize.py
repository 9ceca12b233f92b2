"""JSON-ready dictionaries of the result dataclasses, and back.

Every result type of the core has ``to_dict()`` (plain JSON types only: dict,
list, str, int, float, bool, None) and ``from_dict()``; most use the two
functions here.  Values that JSON has no type for carry a small tag:

==============  ====================================================================
ndarray         ``{"__ndarray__": nested lists, "dtype": "float64", "shape": [...]}``
DataFrame       ``{"__frame__": {"columns", "index", "data"}, "dtypes": {...}, "attrs": {...}}``
tuple           ``{"__tuple__": [...]}`` (so tuples come back as tuples, not lists)
dataclass       ``{"__dataclass__": "varimp_core.module:Class", "fields": {...}}``
==============  ====================================================================

Only dataclasses defined in ``varimp_core`` are rebuilt from a tag; nothing in
the dictionary is ever executed.

>>> import json
>>> import numpy as np
>>> from varimp_core.studies.nulls import PermutationNull
>>> r = PermutationNull(variables=("a", "b"), observed=np.array([0.5, 0.1]),
...                     null=np.zeros((3, 2)))
>>> back = PermutationNull.from_dict(json.loads(json.dumps(r.to_dict())))
>>> back.variables, back.null.shape
(('a', 'b'), (3, 2))
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["to_jsonable", "from_jsonable", "dataclass_to_dict", "dataclass_from_dict"]


def _float(x: float):
    return x if math.isfinite(x) else {"__float__": repr(x)}


def to_jsonable(value: Any) -> Any:
    """``value`` in plain JSON types, with tags for arrays, frames, tuples and dataclasses."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _float(float(value))
    if isinstance(value, np.ndarray):
        data = value.tolist()
        # Booleans, integers and finite floats are JSON as tolist() writes them: no walk
        # element by element (a local-importance table of 10,000 rows took 30 s).
        plain = value.dtype.kind in "biu" or (value.dtype.kind == "f" and
                                              bool(np.isfinite(value).all()))
        return {"__ndarray__": data if plain else _nested(data),
                "dtype": value.dtype.str if value.dtype != object else "object",
                "shape": list(value.shape)}
    if isinstance(value, pd.DataFrame):
        split = value.to_dict(orient="split")
        return {"__frame__": {"columns": [to_jsonable(c) for c in split["columns"]],
                              "index": [to_jsonable(i) for i in split["index"]],
                              "data": [[to_jsonable(v) for v in row] for row in split["data"]]},
                "dtypes": {str(c): str(t) for c, t in value.dtypes.items()},
                "attrs": to_jsonable(dict(value.attrs))}
    if isinstance(value, tuple):
        return {"__tuple__": [to_jsonable(v) for v in value]}
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}",
                "fields": dataclass_to_dict(value)}
    raise TypeError(f"Cannot write a {type(value).__name__} to JSON.")


def _nested(data):
    if isinstance(data, list):
        return [_nested(v) for v in data]
    return to_jsonable(data)


def _unnest(data):
    if isinstance(data, list):
        return [_unnest(v) for v in data]
    return from_jsonable(data)


def from_jsonable(value: Any) -> Any:
    """The inverse of :func:`to_jsonable`."""
    if isinstance(value, list):
        return [from_jsonable(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__float__" in value and len(value) == 1:
        return float(value["__float__"])
    if "__ndarray__" in value:
        shape = tuple(value["shape"])
        if value["dtype"] != "object":
            try:  # plain numbers (see to_jsonable); tagged non-finite floats are walked
                return np.array(value["__ndarray__"], dtype=np.dtype(value["dtype"])
                                ).reshape(shape)
            except (TypeError, ValueError):
                data = _unnest(value["__ndarray__"])
                return np.array(data, dtype=np.dtype(value["dtype"])).reshape(shape)
        data = _unnest(value["__ndarray__"])
        out = np.empty(shape, dtype=object)     # object arrays: element by element
        for _ in range(len(shape) - 1):
            data = [v for row in data for v in row]
        for k, v in enumerate(data if shape else [data]):
            out.flat[k] = v
        return out
    if "__frame__" in value:
        f = value["__frame__"]
        columns = [from_jsonable(c) for c in f["columns"]]
        frame = pd.DataFrame([[from_jsonable(v) for v in row] for row in f["data"]],
                             index=[from_jsonable(i) for i in f["index"]], columns=columns)
        if not len(frame.index):
            frame = pd.DataFrame(columns=columns)
        if f["index"] == list(range(len(f["index"]))):
            frame.index = pd.RangeIndex(len(f["index"]))
        for c in columns:
            dtype = value["dtypes"].get(str(c))
            if dtype is not None:
                try:
                    frame[c] = frame[c].astype(dtype)
                except (TypeError, ValueError):
                    pass
        frame.attrs = from_jsonable(value.get("attrs", {}))
        return frame
    if "__tuple__" in value:
        return tuple(from_jsonable(v) for v in value["__tuple__"])
    if "__dataclass__" in value:
        module, _, name = value["__dataclass__"].partition(":")
        if not (module == "varimp_core" or module.startswith("varimp_core.")):
            raise ValueError(f"Refusing to rebuild {value['__dataclass__']!r}: only varimp_core "
                             "types are read back.")
        cls = getattr(importlib.import_module(module), name)
        return dataclass_from_dict(cls, value["fields"])
    return {k: from_jsonable(v) for k, v in value.items()}


def dataclass_to_dict(obj) -> dict:
    """``{field: to_jsonable(value)}`` for the fields of a dataclass that ``__init__`` takes."""
    return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}


def dataclass_from_dict(cls, d: dict):
    """An instance of ``cls`` from :func:`dataclass_to_dict` output (unknown keys are refused)."""
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(d) - names)
    if unknown:
        raise ValueError(f"{cls.__name__}.from_dict: unknown field {unknown[0]!r}.")
    return cls(**{k: from_jsonable(v) for k, v in d.items()})
