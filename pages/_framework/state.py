"""Page state in the URL: each page mirrors its settings into the address bar.

Every page keeps what a user chose in its URL so a copied link reproduces the
view.  The parameters themselves are declared once in :mod:`pages._framework.params`
(a page's) and :data:`pages._framework.datasource.DATA_PARAMS` (the data choice); a
page writes the query of its settings to its ``{prefix}-query`` store
(:func:`query_store`), and the clientside callback that
:func:`register_url_sync` registers writes it to the address bar with
``history.replaceState`` (no reload, no new history entry; ``present=1`` is
kept).  :func:`notes_box` shows the sentences about link values that were
ignored.
"""

from __future__ import annotations

from typing import Sequence

from dash import Input, clientside_callback, dcc, html

#: URL flag of the presentation mode; kept on every URL the app writes.
PRESENT_KEY = "present"



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


