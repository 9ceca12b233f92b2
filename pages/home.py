"""Home page: three ways in, each one click away: the teaching demos, your CSV, the problems."""

from __future__ import annotations

import dash
from dash import dcc, html

from pages._framework import controls as ui
from pages._framework.lessons import TEACH

dash.register_page(__name__, path="/", name="Home", order=-1, title="varimp")


def _way(title: str, lead: str, items, **kwargs) -> html.Section:
    return ui.card(title, html.P(lead, className="vi-help"),
                   html.Ul(items, className="vi-home-list"), **kwargs)


def layout(**_query):
    teach = [html.Li([dcc.Link(title, href=href, id=f"home-demo-{i}"), " ", html.Span(text)])
             for i, (title, text, href) in enumerate(TEACH)]
    problems = [html.Li(dcc.Link(o["label"], href=f"/data?problem={o['value']}"))
                for o in ui.problem_choices()]
    return html.Div([
        html.H1("varimp", className="vi-page-title"),
        html.P("Why a random forest finds a variable important: exact mean decrease of "
               "impurity (MDI) importances, their decomposition (Louppe et al. 2013) and the "
               "studies around them.", className="vi-page-lead"),
        html.Div(className="vi-home", children=[
            _way("Teach", ["Demos for a lecture, each a link to share. The ",
                           dcc.Link("Learn", href="/learn"), " page has the formulas."],
                 teach, id="home-teach"),
            _way("Analyse your CSV", "A table with a header row; pick the target, then every "
                 "page explains forests on it.",
                 [html.Li(dcc.Link("Upload a CSV \u2192", href="/data?source=upload",
                                   id="home-upload"))], id="home-csv"),
            _way("Explore the built-in problems", "Known distributions, exact where they can "
                 "be, and scikit-learn's data sets.", problems, id="home-problems"),
        ]),
        # An empty hidden graph makes the browser load and run Plotly's 4.8 MB script while
        # the reader is on Home: a demo's first figure then skips it (issue 26; 2.6 s of
        # a cold browser's 3.8 s to the Depth demo's figure, measured by bench_demos.py).
        dcc.Graph(id="home-plotly", figure={"data": [{"type": "scatter", "x": [], "y": []}],
                                            "layout": {}},
                  config={"displayModeBar": False, "staticPlot": True},
                  className="vi-hidden"),
    ], className="vi-page", id="home-page")
