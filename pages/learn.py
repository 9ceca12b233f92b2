"""Learn page: the formulas behind the dashboard, and demo presets as shareable links."""

from __future__ import annotations

import dash
from dash import dcc, html

from pages._framework import controls as ui
from pages._framework.lessons import FORMULAS, PRESETS

dash.register_page(__name__, path="/learn", name="Learn", order=9, title="varimp \u2014 Learn")

PREFIX = "learn"

def _links(links, kind: str, index: int) -> html.P:
    items = []
    for j, (text, href) in enumerate(links):
        if j:
            items.append(html.Span(" \u00b7 ", className="vi-muted"))
        items.append(dcc.Link(f"{text} \u2192", href=href, className=f"learn-{kind}-link",
                              id=f"learn-{kind}-{index}-{j}"))
    return html.P(items, className="vi-description")


def _formula_card(i: int, title: str, text: str, links) -> html.Section:
    return ui.card(title, dcc.Markdown(text, mathjax=True, className="learn-math",
                                       style={"overflowX": "auto"}),
                   _links(links, "formula", i), id=f"learn-formula-{i}")


def _preset_card(i: int, title: str, text: str, links) -> html.Section:
    return ui.card(title, html.P(text), _links(links, "preset", i), id=f"learn-preset-{i}")


def layout(**_query):
    return html.Div([
        html.H1("Learn", className="vi-page-title"),
        html.P("The results this dashboard computes, from Louppe, Wehenkel, Sutera and Geurts, "
               "\u201cUnderstanding variable importances in forests of randomized trees\u201d "
               "(NIPS 2013) and Geurts\u2019 2016 slides, each beside the page that shows it; "
               "then demos as links you can share.", className="vi-page-lead"),
        html.H2("Demos", className="vi-card-title"),
        html.Div([_preset_card(i, *p) for i, p in enumerate(PRESETS)],
                 style={"display": "grid", "gap": "1rem",
                        "gridTemplateColumns": "repeat(auto-fit, minmax(min(100%, 340px), 1fr))"}),
        html.H2("Formulas", className="vi-card-title", style={"marginTop": "1.5rem"}),
        html.Div([_formula_card(i, *f) for i, f in enumerate(FORMULAS)],
                 style={"display": "grid", "gap": "1rem", "maxWidth": "64rem",
                        "gridTemplateColumns": "minmax(0, 1fr)"}),
    ], className="vi-page", id="learn-page")
