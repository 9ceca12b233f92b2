"""Shared controls: cards, labelled fields, the problem picker and its options.

Every function takes the page prefix (or a full id) so ids stay unique across
pages (``data-problem``, ``forest-seed``).  Problem options use pattern-matching
ids ``{"type": f"{prefix}-opt", "problem": name, "key": key}``; read them back
with :func:`option_values`, which drops options left over from another problem.
"""

from __future__ import annotations

import math
import re

from typing import Any, Sequence

from dash import dcc, html

from varimp_core.problems.registry import list_problems, parse_spec


#: The two readings of K (``k_semantics``), as the Importances and Decomposition pages offer them.
SEMANTICS_CHOICES = [("id3", "id3: K of the unused variables"),
                     ("sklearn", "sklearn: K of all p, constant ones skipped")]

def card(title: str | None, *children, id: str | None = None, className: str = "") -> html.Section:
    """A white card with an optional small uppercase title."""
    kids = ([html.H2(title, className="vi-card-title")] if title else []) + list(children)
    kwargs = {"id": id} if id else {}
    return html.Section(kids, className=("vi-card " + className).strip(), **kwargs)


def field(label: str, control, *, help: str | None = None, id: str | None = None,
          className: str = "") -> html.Div:
    """A label above a control, with an optional help line below."""
    kids = [html.Label(label, className="vi-label"), control]
    if help:
        kids.append(html.P(help, className="vi-help"))
    kwargs = {"id": id} if id else {}
    return html.Div(kids, className=("vi-field " + className).strip(), **kwargs)


def number_input(id, value=None, *, min=None, max=None, step: Any = 1,
                 placeholder: str | None = None) -> dcc.Input:
    """A numeric input that reports its value on Enter or blur (no job per keystroke)."""
    return dcc.Input(id=id, type="number", value=value, min=min, max=max, step=step,
                     placeholder=placeholder, debounce=True, className="vi-input")


def problem_choices() -> list[dict]:
    """Dropdown options for the built-in problems, from the core's list."""
    out = []
    for p in list_problems():
        short = p["description"].split(":")[0].split("(")[0].strip()
        if short.lower() == p["name"] and ":" in p["description"]:  # "XOR (Sutera 2013): Y
            # is the parity ...": what follows the name says what it is (issue #26)
            short = re.split(r";|\. ", p["description"].split(":", 1)[1])[0].strip()
        label = p["name"] if not short or short.lower() == p["name"] else f"{p['name']} \u2014 {short}"
        out.append({"label": label, "value": p["name"]})
    return out


def problem_picker(prefix: str, value: str) -> dcc.Dropdown:
    """Dropdown ``{prefix}-problem`` of built-in problem names."""
    return dcc.Dropdown(id=f"{prefix}-problem", options=problem_choices(), value=value,
                        clearable=False, searchable=True, className="vi-dropdown")


def problem_option_fields(prefix: str, spec: str) -> list:
    """One field per option of the problem in ``spec``, filled with the spec's values."""
    name, values = parse_spec(spec)
    info = next(p for p in list_problems() if p["name"] == name)
    fields = []
    for opt in info["options"]:
        oid = {"type": f"{prefix}-opt", "problem": name, "key": opt["key"]}
        value = values.get(opt["key"], opt["default"])
        if opt["type"] == "choice":
            control = dcc.Dropdown(id=oid, options=opt["choices"], value=value, clearable=False)
        elif opt["type"] in ("int", "float"):
            control = number_input(oid, value, step=1 if opt["type"] == "int" else "any")
        else:
            control = dcc.Input(id=oid, type="text", value=value, debounce=True,
                                className="vi-input", placeholder="e.g. X5:2")
        fields.append(field(opt["key"].replace("_", " ").capitalize(), control, help=opt["help"]))
    return fields


def option_values(problem: str, ids: Sequence[dict], values: Sequence[Any]) -> dict:
    """Option values of ``problem`` from pattern-matched ids and values.

    Options rendered for another problem (the form is being replaced) are
    ignored, so a stale form never produces an invalid spec.
    """
    return {i["key"]: v for i, v in zip(ids or [], values or []) if i.get("problem") == problem}


def preview_table(preview: dict) -> html.Div:
    """An HTML table from a ``{"columns", "rows", "caption", "target"}`` dict."""
    target = preview.get("target")
    head = html.Tr([html.Th(c, className="vi-target" if c == target else None)
                    for c in preview["columns"]])
    body = [html.Tr([html.Td("" if v is None else str(v),
                             className="vi-target" if c == target else None)
                     for c, v in zip(preview["columns"], row)])
            for row in preview["rows"]]
    return html.Div([
        html.Div(html.Table([html.Thead(head), html.Tbody(body)], className="vi-table"),
                 className="vi-table-wrap"),
        html.P(preview.get("caption", ""), className="vi-help"),
    ])


#: The impurities of a target with classes, and of a numeric target.
CRITERIA = [("entropy", "Entropy (bits)"), ("gini", "Gini index")]
VARIANCE = [("squared_error", "Variance (squared error)")]


def is_regression(ctx) -> bool:
    """Whether the page's data has a numeric target (``ctx.extra["task"]``)."""
    return ctx.extra.get("task") == "regression"


def criterion_options(ctx) -> list[tuple[str, str]]:
    """The impurities that apply: the variance for a numeric target, else entropy and Gini."""
    return VARIANCE if is_regression(ctx) else CRITERIA


def allowed_criterion(values: dict, ctx) -> dict:
    """``values`` with an impurity that applies to the target (the first one otherwise)."""
    allowed = [v for v, _ in criterion_options(ctx)]
    if values.get("criterion") not in allowed:
        values["criterion"] = allowed[0]
    return values



def binary_method_note(ctx, method: str = "exact-rf") -> tuple[str | None, bool]:
    """What to say beside exact-rf / exact-et (``method``) in a method choice, and whether to
    disable it, from the Data page's finding on the page's data (``ctx.extra["binary"]``,
    :func:`varimp_core.studies.convergence.binary_size`).

    A refusal whatever the settings (missing values, one class) disables them with its first
    clause; fully grown trees past the node limit leave them offered (a max depth always
    fits) with the largest depth that is sure to run, and exact-et says when its compiled
    K = 1 run takes them fully grown all the same; nothing is said when fully grown trees
    fit or the finding is not known yet (the job then decides, with its sentence).
    """
    from varimp_core.exact.binary import MAX_BINARY_NODES

    found = ctx.extra.get("binary")
    if not isinstance(found, dict):
        return None, False
    if found.get("refused"):
        why = str(found["refused"]).split(";")[0].split(". ")[0].rstrip(".")
        names = re.findall(r"'[^']*'", why)
        if len(names) > 2:   # "input columns 'm00' and 52 more have missing values (NaN)"
            why = re.sub(r"'[^']*'(, '[^']*')+", f"{names[0]} and {len(names) - 1} more", why)
        return why[:1].lower() + why[1:], True
    if found.get("full", True):
        return None, False
    nodes = float(found.get("nodes", float("inf")))
    about = ("more than 10^308" if not math.isfinite(nodes) else
             f"at least {nodes:.2g}" if found.get("at_least") else f"about {nodes:.2g}")
    depth = int(found.get("depth", 1))
    if method == "exact-et" and found.get("full_k1"):
        return (f"fully grown at K = 1 only ({about} nodes); max depth \u2264 {depth} at "
                "any K"), False
    return (f"max depth \u2264 {depth} here (fully grown: {about} "
            f"nodes, over {MAX_BINARY_NODES:,})"), False
