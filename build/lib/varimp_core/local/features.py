"""Feature lookup shared by :mod:`varimp_core.local.partial_dependence` and :mod:`varimp_core.local.response_dependence`."""

from __future__ import annotations

from numbers import Integral


def feature_index(feature, names):
    if is_int(feature):
        if not 0 <= int(feature) < len(names):
            raise ValueError(f"Feature index {feature} is out of range: X has {len(names)} columns.")
        return int(feature)
    if str(feature) not in names:
        shown = ", ".join(repr(n) for n in names[:20]) + (" ..." if len(names) > 20 else "")
        raise ValueError(f"Unknown feature {feature!r}; choose among: {shown}.")
    return names.index(str(feature))


def is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)
