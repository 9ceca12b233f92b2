"""Parameters declared once: the control, its id, URL sync, validation and typed settings.

A page declares each of its parameters once, as a :class:`Param`: the name it
has in the settings passed to the core (scikit-learn's vocabulary:
``max_features``, ``max_depth``, ``n_estimators``, ``random_state``), its
kind and bounds, its default, its URL key, its label and help.  A
:class:`ParamSet` of a page's parameters derives everything else:

* :meth:`ParamSet.fields`: the labelled controls, ids ``{prefix}-{key}``, each
  with a slot ``{prefix}-{key}-error`` for the sentence about its value;
* :meth:`ParamSet.from_url`: values from a link (an invalid value is replaced
  by its default, and a note says so: the link was written by someone else);
* :meth:`ParamSet.validate`: the typed settings from the controls' values, or
  one sentence per control whose value is out of bounds or unparseable
  ("N must be a whole number from 10 to 1,000,000.") -- never a silent
  fallback;
* :meth:`ParamSet.query`: the URL query of the settings.

Bounds may depend on the data (K is at most the number of inputs) or on the
server's limits: give a callable of the :class:`Context`.  The same
validation runs in the browser's callback and again in the job on the
server, whatever the browser sent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urlencode

from dash import Input, Output, dcc, html

Bound = Any  # a number, None, or a callable Context -> number


#: The largest number of inputs a validation context counts.  A page may derive ``p`` from
#: control values not yet checked (Masking's irrelevant bits: 10^7 built ten million depth
#: choices, 3.5 GB, before the number was refused); a larger count is no table's (uploads
#: stop at ``VARIMP_MAX_COLUMNS``, 1,000 by default), so the bounds and choices made from it
#: stay this small and the value that made it gets its own sentence.
MAX_CONTEXT_P = 10_000


@dataclass(frozen=True)
class Context:
    """What a bound or a choice may depend on: the data's number of inputs ``p``.

    ``p`` is at most :data:`MAX_CONTEXT_P` (and at least 0), whatever it was counted from,
    so nothing a bound or a choice builds from it is sized by an unchecked number.
    """

    p: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.p is not None:
            object.__setattr__(self, "p", max(0, min(int(self.p), MAX_CONTEXT_P)))


def sentence(text: str) -> str:
    """``text`` with a capital first letter and a full stop (a Greek symbol stays as it is)."""
    text = str(text).strip() or "This value cannot be used"
    text = (text[:1].upper() if text[:1].isascii() else text[:1]) + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _fmt(value: float, kind: str) -> str:
    return f"{int(value):,}" if kind == "int" else f"{value:g}"


@dataclass(frozen=True)
class Param:
    """One parameter of a page, declared once.

    Parameters
    ----------
    name : str
        Key in the settings passed to the core (scikit-learn's vocabulary).
    label : str
        Label of the control ("K", "Number of trees").
    kind : {"int", "float", "choice", "bool", "text", "list"}
        ``list`` is a list of strings (a checklist, or a URL key that repeats).
    default : Any
        Value of a fresh page (and of an invalid link value).
    low, high : number, callable or None
        Bounds, inclusive; a callable gets the :class:`Context`.
    choices : sequence of (value, label) or callable
        The allowed values of a ``choice`` parameter.
    key : str, default=name
        Key in the URL query string (kept stable so old links work).
    help : str or callable
        Help line under the control; a callable gets the :class:`Context`.
    blank : str or None
        When given, a blank value is allowed and means None; the text is the
        control's placeholder ("full"; a dropdown's too).
    control : {"number", "radio", "dropdown", "check", "slider"}, optional
        Default: ``number`` for numbers, ``radio`` for choices, ``check`` for
        booleans, a text box for text.
    step : number, optional
        Step of a number or slider control.
    what : str, optional
        Name in sentences; defaults to ``label``.
    applies : callable, optional
        ``applies(settings) -> bool``: whether the parameter matters for the
        other settings (the number of trees only for sampled methods).  A
        parameter that does not apply is left out of the settings and the URL
        and is not validated.
    check : callable, optional
        For ``text`` (each item for ``list``): ``check(text) -> value``, raising
        ``ValueError`` with a sentence (a problem spec, an upload key).
    when : callable, optional
        ``when(ctx) -> bool``: whether the parameter matters for the data (the
        :class:`Context`); like ``applies``, a parameter that does not is hidden, left
        out of the settings and the URL, and not validated.
    """

    name: str
    label: str
    kind: str = "int"
    default: Any = None
    low: Bound = None
    high: Bound = None
    choices: Any = ()
    key: str = ""
    help: Any = ""
    blank: str | None = None
    control: str = ""
    step: Any = None
    what: str = ""
    applies: Callable[[Mapping[str, Any]], bool] | None = None
    check: Callable[[str], Any] | None = None
    when: Callable[[Context], bool] | None = None

    def applies_to(self, settings: Mapping[str, Any], ctx: Context | None = None) -> bool:
        """Whether the parameter matters for these settings (``applies``) and data (``when``)."""
        if self.when is not None and ctx is not None and not self.when(ctx):
            return False
        return self.applies is None or bool(self.applies(settings))

    @property
    def url_key(self) -> str:
        return self.key or self.name

    def bounds(self, ctx: Context) -> tuple[Any, Any]:
        low = self.low(ctx) if callable(self.low) else self.low
        high = self.high(ctx) if callable(self.high) else self.high
        return low, high

    def options(self, ctx: Context) -> list[dict]:
        choices = self.choices(ctx) if callable(self.choices) else self.choices
        out = []
        for c in choices:
            if isinstance(c, Mapping):
                out.append(dict(c))
            elif isinstance(c, str):  # a column name
                out.append({"label": c, "value": c})
            else:
                value, label = c
                out.append({"label": label, "value": value})
        return out

    def parse(self, raw: Any, ctx: Context) -> Any:
        """The typed value of ``raw`` (a control's value or a URL string).

        Raises
        ------
        ValueError
            With a sentence naming the parameter and what is allowed.
        """
        what = self.what or self.label
        if self.kind == "list":  # None: not given (the default applies); [] given, and empty
            if raw is None:
                return None
            items = [raw] if isinstance(raw, str) else list(raw)
            items = [str(x) for x in items if str(x) != ""]
            return [self.check(x) for x in items] if self.check else items
        if isinstance(raw, (list, tuple)) and self.kind != "bool":
            raw = raw[-1] if raw else None
        blank = raw is None or (isinstance(raw, str) and not raw.strip())
        if self.kind == "bool":
            return _parse_bool(raw, what)
        if blank:
            if self.blank is not None:
                return None
            if self.kind in ("int", "float"):
                raise ValueError(f"Enter {what}: {self._range_text(ctx)}.")
            raise ValueError(f"Choose {what}.")
        if self.kind == "choice":
            options = self.options(ctx)
            allowed = [o["value"] for o in options if not o.get("disabled")]
            for value in allowed:
                if str(value).lower() == str(raw).strip().lower():
                    return value
            for o in options:   # offered but disabled: say why, as its label does
                if str(o["value"]).lower() == str(raw).strip().lower():
                    why = str(o.get("label", "")).partition(" \u2014 ")[2]
                    raise ValueError(f"{what} {o['value']!r} is not available here"
                                     + (f": {why}." if why else "."))
            names = ", ".join(str(v) for v in allowed)
            raise ValueError(f"{what} must be one of {names}, not {raw!r}.")
        if self.kind == "text":
            return self.check(str(raw)) if self.check else str(raw)[:200]
        try:
            number = float(str(raw).strip())
        except ValueError:
            raise ValueError(f"{what} must be {self._range_text(ctx)}, not {raw!r}.") from None
        low, high = self.bounds(ctx)
        bad = not math.isfinite(number) or (self.kind == "int" and number != int(number))
        bad = bad or (low is not None and number < low) or (high is not None and number > high)
        if bad:
            shown = _fmt(number, self.kind) if math.isfinite(number) and (
                self.kind == "float" or number == int(number)) else repr(raw)
            raise ValueError(f"{what} must be {self._range_text(ctx)}, not {shown}.")
        return int(number) if self.kind == "int" else number

    def _range_text(self, ctx: Context) -> str:
        low, high = self.bounds(ctx)
        noun = "a whole number" if self.kind == "int" else "a number"
        if low is not None and high is not None:
            return f"{noun} from {_fmt(low, self.kind)} to {_fmt(high, self.kind)}"
        if low is not None:
            return f"{noun} of at least {_fmt(low, self.kind)}"
        if high is not None:
            return f"{noun} of at most {_fmt(high, self.kind)}"
        return noun

    # -- components ---------------------------------------------------------------
    def control_value(self, value: Any) -> Any:
        """The control's value for a setting (a checklist holds ``["on"]`` or ``[]``)."""
        if self.kind == "bool" and self._control() == "check":
            return ["on"] if value else []
        return value

    def _control(self) -> str:
        if self.control:
            return self.control
        return {"int": "number", "float": "number", "choice": "radio", "bool": "check",
                "list": "checklist"}.get(self.kind, "text")

    def component(self, cid: str, value: Any, ctx: Context):
        """The control itself, with id ``cid``."""
        kind = self._control()
        value = self.control_value(value)
        if kind == "number":
            # No min/max in the page: a browser blanks a value outside them, and the user
            # would read "Enter K" for the 9 they typed; the bounds are checked on the server.
            return dcc.Input(id=cid, type="number", value=value, debounce=True,
                             step=self.step if self.step is not None else
                             (1 if self.kind == "int" else "any"),
                             placeholder=self.blank, className="vi-input")
        if kind == "radio":
            return dcc.RadioItems(id=cid, options=self.options(ctx), value=value,
                                  className="vi-radio", labelStyle={"display": "flex"})
        if kind == "dropdown":
            options = self.options(ctx)  # a long list: typing a name finds it
            return dcc.Dropdown(id=cid, options=options, value=value, clearable=False,
                                searchable=len(options) > 8, placeholder=self.blank,
                                className="vi-dropdown")
        if kind == "check":
            return dcc.Checklist(id=cid, options=[{"label": self.help_text(ctx) or self.label,
                                                   "value": "on"}],
                                 value=value, className="vi-check")
        if kind == "checklist":
            return dcc.Checklist(id=cid, options=self.options(ctx), value=list(value or []),
                                 className="vi-check")
        if kind == "slider":
            low, high = self.bounds(ctx)
            return dcc.Slider(id=cid, min=low, max=high, step=self.step or 1, value=value,
                              marks=None if high - low > 12 else
                              {i: str(i) for i in range(int(low), int(high) + 1)})
        return dcc.Input(id=cid, type="text", value=value, debounce=True, className="vi-input")

    def help_text(self, ctx: Context) -> str:
        return self.help(ctx) if callable(self.help) else self.help


def seed_param(key: str = "tree_seed", **kw) -> Param:
    """The seed of a page's random draws: a whole number from 0 to 2**32 - 1 (numpy's range).

    ``key`` is its URL key; ``kw`` sets the other fields (``help``, ``applies``...).
    """
    return Param("random_state", "Seed", default=0, key=key, low=0, high=2**32 - 1, **kw)


def _parse_bool(raw: Any, what: str) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, (list, tuple)):
        return bool(raw)
    text = "" if raw is None else str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"{what} must be 1 or 0, not {raw!r}.")


@dataclass(frozen=True)
class Ticks(Param):
    """A ``list`` parameter shown as a checklist, holding at least one of its ``choices`` (``empty`` says so), in
    their order, whatever order a link gives (``measures=ranger&measures=mdi``)."""

    kind: str = "list"
    empty: str = ""

    def parse(self, raw, ctx):
        allowed = [o["value"] for o in self.options(ctx)]
        chosen = {x.strip().lower() for x in super().parse(raw, ctx) or ()} - {""}
        unknown = sorted(chosen - set(allowed))
        if unknown:
            raise ValueError(f"{unknown[0]!r} is unknown; use {', '.join(allowed)}")
        if not chosen:
            raise ValueError(self.empty)
        return [v for v in allowed if v in chosen]

    def component(self, cid, value, ctx):  # the framework's checklist, one tick per line
        return dcc.Checklist(id=cid, options=self.options(ctx), value=list(value),
                             className="vi-check", labelStyle={"display": "flex"})


class ParamErrors(ValueError):
    """Some controls hold values that cannot be used: one sentence per parameter name."""

    def __init__(self, errors: Mapping[str, str]):
        self.errors = dict(errors)
        super().__init__(" ".join(self.errors.values()))


class ParamSet:
    """The parameters of one page (or one view of a page), with the ids of their controls.

    Parameters
    ----------
    prefix : str
        The page's id prefix; the control of ``p`` has id ``{prefix}-{p.url_key}``, lower
        case with ``-`` for ``_`` (``imp-tree-seed``).
    params : sequence of Param
    """

    def __init__(self, prefix: str, params: Sequence[Param]):
        self.prefix = prefix
        self.params = tuple(params)
        self.by_name = {p.name: p for p in self.params}

    def __iter__(self):
        return iter(self.params)

    def id(self, name: str) -> str:
        """Id of the control of parameter ``name``."""
        return f"{self.prefix}-{self.by_name[name].url_key.lower().replace('_', '-')}"

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def inputs(self) -> list[Input]:
        return [Input(self.id(n), "value") for n in self.names]

    def error_outputs(self) -> list[Output]:
        return [Output(f"{self.id(n)}-error", "children") for n in self.names]

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    # -- values ---------------------------------------------------------------------
    def from_url(self, query: Mapping[str, Any], ctx: Context) -> tuple[dict, list[str]]:
        """Values from a link: parsed, or the default with a note for each invalid one."""
        values, notes = self.defaults(), []
        for p in self.params:
            raw = query.get(p.url_key)
            if raw is None:
                continue
            try:
                values[p.name] = p.parse(raw, ctx)
            except ValueError as exc:
                notes.append(f"The link's {p.what or p.label} was ignored: {sentence(exc)} "
                             "Using the default instead.")
        return values, notes

    def validate(self, values: Mapping[str, Any], ctx: Context) -> tuple[dict, dict]:
        """Typed settings from control values, and a sentence per unusable value.

        Returns
        -------
        settings : dict
            The parameters that apply, by name (empty when there are errors).
        errors : dict
            ``{name: sentence}``; empty when every value can be used.
        """
        settings: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for p in self.params:
            try:
                settings[p.name] = p.parse(values.get(p.name), ctx)
            except ValueError as exc:
                errors[p.name] = sentence(exc)
        for p in self.params:
            if not p.applies_to({**self.defaults(), **settings}, ctx):
                settings.pop(p.name, None)
                errors.pop(p.name, None)
        return ({} if errors else settings), errors

    def settings(self, values: Mapping[str, Any], ctx: Context) -> dict:
        """:meth:`validate`, raising :class:`ParamErrors` when a value cannot be used."""
        settings, errors = self.validate(values, ctx)
        if errors:
            raise ParamErrors(errors)
        return settings

    def query(self, settings: Mapping[str, Any]) -> str:
        """The URL query of ``settings`` (no leading ``?``), in declaration order."""
        pairs = []
        for p in self.params:
            value = settings.get(p.name)
            if value is None or p.name not in settings:
                continue
            if isinstance(value, (list, tuple)):  # [] is written "key=": given, and empty
                pairs.extend([(p.url_key, str(v)) for v in value] or [(p.url_key, "")])
                continue
            if isinstance(value, bool):
                value = "1" if value else "0"
            elif isinstance(value, float) and value.is_integer():
                value = int(value)
            pairs.append((p.url_key, str(value)))
        return urlencode(pairs, safe=":,")

    # -- components -------------------------------------------------------------------
    def field(self, name: str, value: Any, ctx: Context, *, className: str = "") -> html.Div:
        """The labelled control of ``name``, its help line and its error slot."""
        p = self.by_name[name]
        cid = self.id(name)
        kids = [html.Label(p.label, className="vi-label", htmlFor=cid)]
        if p._control() == "check":
            kids = [html.Label(p.label, className="vi-label")]
        kids.append(p.component(cid, value, ctx))
        help_text = p.help_text(ctx)
        if help_text and p._control() != "check":
            kids.append(html.P(help_text, className="vi-help"))
        kids.append(html.P(id=f"{cid}-error", className="vi-field-error", role="alert"))
        return html.Div(kids, id=f"{cid}-field", className=("vi-field " + className).strip())

    def fields(self, values: Mapping[str, Any], ctx: Context,
               names: Sequence[str] | None = None) -> list[html.Div]:
        """:meth:`field` of each parameter (or of ``names``), hidden where it does not apply."""
        full = {**self.defaults(), **values}
        out = []
        for n in names or self.names:
            p = self.by_name[n]
            hidden = not p.applies_to(full, ctx)
            out.append(self.field(n, values.get(n, p.default), ctx,
                                  className="vi-hidden" if hidden else ""))
        return out

    def field_classes(self, values: Mapping[str, Any], ctx: Context | None = None) -> list[str]:
        """Class of each field: hidden where the parameter does not apply to ``values`` (and,
        given ``ctx``, to the data)."""
        full = {**self.defaults(), **values}
        return ["vi-field" if p.applies_to(full, ctx) else "vi-field vi-hidden"
                for p in self.params]
