"""The varimp dashboard: ``python app.py`` serves http://127.0.0.1:8050 (``make run PORT=8051``).

Production: ``gunicorn app:server`` (see the Makefile and Dockerfile).  With
``REDIS_URL`` set, background jobs go to Celery workers started with
``celery -A app:celery_app worker`` (``docker-compose.yml`` runs the web
server, a worker and Redis).  ``VARIMP_DEBUG=1`` turns Dash's debug mode on
(only with ``python app.py``; see :mod:`pages._server.hygiene`).  Per-request limits
come from the environment (:mod:`pages._server.limits`).
"""

from __future__ import annotations

import errno
import os
import socket
import sys

import dash
# Imported before the app is built: Dash registers the scripts it may serve when a process
# answers its first request, before the pages (which bring the grid) are imported.  Without
# this, a gunicorn worker whose first request was not the index page answered 404 for the
# grid's script, and the browser said "Error loading dependencies" (half of the page loads
# under two workers failed).
import dash_ag_grid  # noqa: F401
from dash import ALL, ClientsideFunction, Dash, Input, Output, State, dcc, html, no_update
from flask import redirect, request

from pages._server import hygiene, jobs, preload
from pages._framework import page_frame
from pages._framework.datasource import DATA_PARAMS, link_session_data, max_request_bytes
from pages._server.limits import max_upload_bytes

background_manager, celery_app = jobs.make_manager()

app = Dash(
    __name__,
    use_pages=True,
    background_callback_manager=background_manager,
    title="varimp",
    update_title=None,
    # A page left while its job runs gets the job's progress, streamed result and running
    # props after it is gone: without this the browser logged "ID running component not found
    # in layout" (16 errors leaving Distributions mid-sweep, issue 26).  It also turns off
    # Dash's check of every callback's ids against the pages' layouts at the first request;
    # tests/pages/test_app_shell.py makes that check instead.
    suppress_callback_exceptions=True,
    # Pages get the session's data choice when their URL does not carry one.
    routing_callback_inputs={"vi_data": State("vi-data", "data")},
)
server = app.server
server.config["MAX_CONTENT_LENGTH"] = max_request_bytes()
# No debug or dev tools unless VARIMP_DEBUG=1; security headers, request ids in the
# logs, a plain sentence (never a traceback) for an unhandled error.
hygiene.install(app)


@server.route("/_health")
def health():
    return "ok", 200, {"Content-Type": "text/plain; charset=utf-8"}


@server.errorhandler(413)
def too_large(_error):
    mib = max_upload_bytes() / 2**20
    return (
        f"The request is too large: uploads are limited to {mib:g} MiB. "
        "Use a smaller file (fewer rows or columns).",
        413,
        {"Content-Type": "text/plain; charset=utf-8"},
    )


@server.before_request
def old_data_links():
    """The Data page was at ``/``: a link there that names data opens ``/data`` with it."""
    if request.path == "/" and set(request.args) & set(DATA_PARAMS.names):
        return redirect("/data?" + request.query_string.decode("latin-1"), 302)
    return None


def _nav_links() -> list:
    """A link to every page but the home page (the brand links there)."""
    pages = sorted(dash.page_registry.values(), key=lambda p: (p.get("order") or 0, p["name"]))
    return [
        dcc.Link(page["name"], href=page["relative_path"], className="vi-nav-link",
                 id={"type": "vi-nav", "path": page["relative_path"]})
        for page in pages if page["relative_path"] != "/"
    ]


app.layout = html.Div(
    id="vi-root",
    className="vi-app",
    children=[
        dcc.Location(id="vi-url", refresh=False),
        dcc.Store(id="vi-data", storage_type="session"),
        dcc.Store(id="vi-nav-limits"),
        html.Header(className="vi-topbar", id="vi-topbar", children=[
            dcc.Link("varimp", href="/", className="vi-brand"),
            html.Span("why a random forest finds a variable important", className="vi-tagline"),
            html.Button("Menu", id="vi-menu-button", className="vi-menu-button",
                        **{"aria-controls": "vi-nav", "aria-expanded": "false"}),
            html.Nav(_nav_links(), className="vi-nav", id="vi-nav"),
            html.Button("Present", id="vi-present-button", className="vi-present-button",
                        title="Presentation mode: large figures and text (?present=1)"),
        ]),
        html.Main(dash.page_container, className="vi-main"),
    ],
)

# Browser-side callbacks of the shell (assets/varimp.js): presentation mode (?present=1), the
# active nav link and nav links that carry the data choice and the flag; the menu button, which
# a followed link closes; the presentation toggle, which routes to the URL with the flag toggled.
app.clientside_callback(
    ClientsideFunction("varimp", "shell"),
    Output("vi-root", "className"),
    Output({"type": "vi-nav", "path": ALL}, "href"),
    Output({"type": "vi-nav", "path": ALL}, "className"),
    Output({"type": "vi-nav", "path": ALL}, "title"),
    Output("vi-present-button", "children"), Output("vi-present-button", "aria-pressed"),
    Input("vi-url", "pathname"), Input("vi-url", "search"), Input("vi-data", "data"),
    Input("vi-nav-limits", "data"), State({"type": "vi-nav", "path": ALL}, "id"),
)


# Pages that cannot run on the session's data (Decomposition above the exact limit of
# inputs) are dimmed in the navigation, with the reason as their title (issue #26).
@app.callback(Output("vi-nav-limits", "data"), Input("vi-data", "data"))
def nav_limits(vi_data):
    return page_frame.nav_limits(vi_data, list(dash.page_registry.values()))
app.clientside_callback(
    ClientsideFunction("varimp", "menu"),
    Output("vi-topbar", "className"), Output("vi-menu-button", "aria-expanded"),
    Input("vi-menu-button", "n_clicks"), Input("vi-url", "pathname"),
)
app.clientside_callback(
    ClientsideFunction("varimp", "present"),
    Output("vi-present-button", "title"), Input("vi-present-button", "n_clicks"),
    prevent_initial_call=True,
)


# A page URL that names its data (a shared link opened in a fresh session) makes
# that the session's data choice, as the Data page would, so the navigation keeps it.
@app.callback(
    Output("vi-data", "data", allow_duplicate=True),
    Input("vi-url", "search"),
    State("vi-data", "data"),
    prevent_initial_call="initial_duplicate",
)
def keep_link_data(search, current):
    store = link_session_data(search, current)
    return no_update if store is None else store


# The multiway forests' compiled kernels, loaded before the first request rather than in it
# (Why this row's exact demos are computed in the request; jobs forked from here inherit
# them): about a second, once per process (pages._server.preload).
preload.compiled_kernels()


def port_in_use(host: str, port: int) -> bool:
    """Whether another program listens on ``host:port`` (what the server would bind)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def main() -> None:
    """Serve on ``VARIMP_PORT`` (else ``PORT``) and ``VARIMP_HOST``; ``make run PORT=`` sets them."""
    host = os.environ.get("VARIMP_HOST") or "127.0.0.1"
    port = int(os.environ.get("VARIMP_PORT") or os.environ.get("PORT") or "8050")
    # The reloader's child (debug mode) inherits the parent's socket: only the parent checks.
    if not os.environ.get("WERKZEUG_RUN_MAIN") and port_in_use(host, port):
        sys.exit(f"Port {port} is in use (another varimp or another program). Choose another "
                 f"port: make run PORT={port + 1}  (or VARIMP_PORT={port + 1} python app.py).")
    # Dash.run reads the DASH_* variables again: run_options names every switch.
    app.run(host=host, port=port, request_handler=hygiene.QuietHandler, **hygiene.run_options())


if __name__ == "__main__":
    main()
