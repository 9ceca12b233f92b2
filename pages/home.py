"""Home page: three ways in, each one click away: the teaching demos, your CSV, the problems."""

from __future__ import annotations

import dash
from dash import dcc, html

from pages._ui import controls as ui

dash.register_page(__name__, path="/", name="Home", order=-1, title="varimp")

#: (title, what it shows in one sentence, preset link).  The Learn page tells each at length;
#: ``tests/test_layout.py`` checks that every Learn demo has its link here.
DEMOS = (
    ("Table 2 of Louppe et al. (2013)",
     "The LED's exact importances for K = 1..7 beside the paper's columns: X2 and X5 gain, "
     "the others lose, and every column sums to log2 10 bits.",
     "/masking?problem=led"),
    ("Masking",
     "The LED by degree at K = 1 and K = 7: greedy trees take the strong variables first and "
     "leave the others little to explain.",
     "/decomposition?problem=led&K=7"),
    ("XOR",
     "Each bit alone says nothing about Y; its 1/2 bit comes only from terms that condition "
     "on the other bit.",
     "/decomposition?problem=xor:irrelevant=2&K=4"),
    ("SYM (Sutera)",
     "Each bit carries 0.1887 bit about Y alone and 0.3113 bit more given the other; totally "
     "randomized trees credit each with their mean, 1/4 bit.",
     "/decomposition?problem=sym&K=1"),
    ("Depth (Proposition 6)",
     "Trees stopped at depth 2 keep only the degree 0 and 1 terms of Eqn 3.",
     "/decomposition?problem=led&K=1&depth=2"),
    ("Irrelevant variables (Theorem 5)",
     "Four added fair bits leave the K = 1 importances unchanged and get 0 themselves.",
     "/masking?problem=led:irrelevant=4"),
    ("Noisy copy",
     "A copy of X5 flipped with probability 0.1 shares X5's credit at K = 1 and is masked "
     "to 0 as K grows.",
     "/masking?problem=led&copy=X5&flip=0.1"),
)


def _way(title: str, lead: str, items, **kwargs) -> html.Section:
    return ui.card(title, html.P(lead, className="vi-help"),
                   html.Ul(items, className="vi-home-list"), **kwargs)


def layout(**_query):
    teach = [html.Li([dcc.Link(title, href=href, id=f"home-demo-{i}"), " ", html.Span(text)])
             for i, (title, text, href) in enumerate(DEMOS)]
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
    ], className="vi-page", id="home-page")
