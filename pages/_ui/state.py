"""Page state in the URL query string: parsing with validation, serialising back.

Every page keeps what a user chose in its URL so a copied link reproduces the
view.  A page declares its parameters once, as :class:`Param` objects, and

* ``layout(**query)`` calls :func:`parse_query` to get validated values (bad
  values fall back to their defaults, with one note per value to show on the
  page, see :func:`notes_box`);
* its callback returns :func:`encode_query` of the current values to the
  page's query store (:func:`query_store`), and the clientside callback that
  :func:`register_url_sync` registers writes it to the address bar with
  ``history.replaceState`` (no reload, no new history entry; ``present=1`` is
  kept).

Data parameters shared by all pages (which problem or upload) are declared in
:mod:`pages._ui.datasource` as ``DATA_PARAMS``; a page's query is the data
query followed by its own parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence
from urllib.parse import urlencode

from dash import Input, clientside_callback, dcc, html

__all__ = [
    "Param",
    "parse_query",
    "encode_query",
    "int_parser",
    "float_parser",
    "choice_parser",
    "bool_parser",
    "query_store",
    "register_url_sync",
    "notes_box",
    "PRESENT_KEY",
    "whole_number",
]

#: URL flag of the presentation mode; kept on every URL the app writes.
PRESENT_KEY = "present"


@dataclass(frozen=True)
class Param:
    """One URL query parameter of a page.

    Parameters
    ----------
    name : str
        Key in the query string.
    default : Any
        Value when the key is absent or its value is invalid.
    parse : callable
        ``parse(text) -> value``; raises ``ValueError`` with a sentence naming
        what is allowed.  Gets a list of strings when ``multi`` is True.
    label : str, default=""
        Name shown in notes ("Sample size"); defaults to ``name``.
    multi : bool, default=False
        The key may repeat (``numeric=a&numeric=b``); the value is a list.
    """

    name: str
    default: Any
    parse: Callable[[Any], Any]
    label: str = ""
    multi: bool = False


def parse_query(query: Mapping[str, Any], params: Sequence[Param]) -> tuple[dict, list[str]]:
    """Validate URL query values against a page's parameters.

    Parameters
    ----------
    query : mapping
        What Dash passes to ``layout(**query)``: a string per key, or a list
        of strings for a repeated key.  Unknown keys are ignored.
    params : sequence of Param

    Returns
    -------
    values : dict
        One value per parameter: parsed, or the default.
    notes : list of str
        One sentence per value that was invalid and replaced by its default.
    """
    values: dict[str, Any] = {}
    notes: list[str] = []
    for p in params:
        raw = query.get(p.name)
        if raw is None:
            values[p.name] = p.default
            continue
        if p.multi:
            raw = [raw] if isinstance(raw, str) else list(raw)
        elif isinstance(raw, (list, tuple)):
            raw = raw[-1] if raw else ""
        try:
            values[p.name] = p.parse(raw)
        except (ValueError, TypeError) as exc:
            values[p.name] = p.default
            label = p.label or p.name
            reason = str(exc).strip() or "it is not valid"
            notes.append(f"The link's {label} was ignored: {_sentence(reason)} "
                         f"Using the default instead.")
    return values, notes


def _sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def encode_query(values: Mapping[str, Any], *, drop: Iterable[str] = ()) -> str:
    """Serialise parameter values to a query string, without the leading ``?``.

    None and empty strings are left out; lists become repeated keys (an empty
    list a blank value, ``key=``); booleans are written ``1``/``0``.  Keys keep the order of ``values``.
    """
    dropped = set(drop)
    pairs: list[tuple[str, str]] = []
    for key, value in values.items():
        if key in dropped or value is None or value == "":
            continue
        if isinstance(value, (list, tuple)):
            # An empty list is written as a blank value: "given, and empty",
            # which differs from an absent key ("use the default").
            pairs.extend((key, _text(v)) for v in value) if value else pairs.append((key, ""))
        else:
            pairs.append((key, _text(value)))
    return urlencode(pairs, safe=":,")


# -- parsers ---------------------------------------------------------------
def int_parser(low: int | None = None, high: int | None = None, *, what: str = "value"):
    """Parser of whole numbers in ``[low, high]`` with a sentence on failure."""

    def parse(text: str) -> int:
        try:
            value = int(str(text).strip())
        except ValueError:
            raise ValueError(f"the {what} must be a whole number, got {text!r}") from None
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError(f"the {what} must be between {low} and {high}, got {value}")
        return value

    return parse


def float_parser(low: float | None = None, high: float | None = None, *, what: str = "value"):
    """Parser of finite numbers in ``[low, high]`` with a sentence on failure."""

    def parse(text: str) -> float:
        try:
            value = float(str(text).strip())
        except ValueError:
            raise ValueError(f"the {what} must be a number, got {text!r}") from None
        if not math.isfinite(value) or (low is not None and value < low) \
                or (high is not None and value > high):
            raise ValueError(f"the {what} must be between {low:g} and {high:g}, got {text!r}")
        return value

    return parse


def choice_parser(choices: Sequence[str], *, what: str = "value"):
    """Parser of one of ``choices`` (case-insensitive)."""
    lookup = {c.lower(): c for c in choices}

    def parse(text: str) -> str:
        value = lookup.get(str(text).strip().lower())
        if value is None:
            raise ValueError(f"the {what} must be one of {', '.join(choices)}, got {text!r}")
        return value

    return parse


def bool_parser(text: str) -> bool:
    """``1/true/yes/on`` -> True, ``0/false/no/off`` -> False."""
    t = str(text).strip().lower()
    if t in ("1", "true", "yes", "on"):
        return True
    if t in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected 1 or 0, got {text!r}")


# -- components --------------------------------------------------------------
def query_store(prefix: str, query: str = "") -> dcc.Store:
    """The store holding a page's current query string (``{prefix}-query``)."""
    return dcc.Store(id=f"{prefix}-query", data=query)


def register_url_sync(prefix: str) -> None:
    """Mirror ``{prefix}-query`` into the address bar (call once, at import).

    Uses ``history.replaceState``: no reload, no routing, and the
    ``present=1`` flag of the current URL is kept.
    """
    clientside_callback(
        """
        function(query) {
            if (query === null || query === undefined) { return; }
            const here = new URLSearchParams(window.location.search);
            const next = new URLSearchParams(query);
            const flag = here.get("%s");
            if (flag !== null && !next.has("%s")) { next.set("%s", flag); }
            const qs = next.toString();
            const url = window.location.pathname + (qs ? "?" + qs : "") + window.location.hash;
            if (url !== window.location.pathname + window.location.search + window.location.hash) {
                window.history.replaceState(window.history.state, "", url);
            }
        }
        """ % (PRESENT_KEY, PRESENT_KEY, PRESENT_KEY),
        Input(f"{prefix}-query", "data"),
    )


def notes_box(notes: Sequence[str], *, id: str | None = None) -> html.Div:
    """A box of sentences about ignored or corrected input (empty when none)."""
    kwargs = {"id": id} if id else {}
    if not notes:
        return html.Div(className="vi-notes vi-hidden", **kwargs)
    return html.Div(
        [html.P(n) for n in notes], className="vi-notes", role="alert", **kwargs
    )


def whole_number(value, what: str, low: int, high: int | None, default=None, *,
                 grouped: bool = True):
    """A whole number from a control, or ``default`` when blank.

    ``grouped=False`` writes the range without thousands separators
    ("from 1 to 2000" rather than "from 1 to 2,000").

    Raises
    ------
    ValueError
        With a sentence naming ``what`` and the allowed range.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"The {what} must be a whole number, got {value!r}.") from None
    fmt = "," if grouped else ""
    limit = (f"from {low:{fmt}} to {high:{fmt}}" if high is not None
             else f"of at least {low:{fmt}}")
    if not math.isfinite(number) or number != int(number) or number < low \
            or (high is not None and number > high):
        raise ValueError(f"The {what} must be a whole number {limit}, got {value!r}.")
    return int(number)
