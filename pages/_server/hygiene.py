"""Production hygiene of the web server: no debug, safe headers, request ids, plain errors.

``app.py`` calls :func:`install` once, right after building the Dash app:

* Dash's dev tools (debug UI, hot reload, dev bundles, props check) stay off
  unless ``VARIMP_DEBUG=1``, even when ``DASH_UI``/``DASH_HOT_RELOAD`` ...
  are set in the environment, and Flask's debug mode is off;
* every response carries :data:`SECURITY_HEADERS`, a Dash app's :data:`CSP` (no
  inline script but Dash's own, by hash) and no ``Server`` version (:class:`QuietHandler`);
* every request has an id: a client's ``X-Request-ID`` when it is a safe
  token (:data:`SAFE_REQUEST_ID`), else a new one; it is echoed in the
  response's ``X-Request-ID`` and added to every log line
  (:class:`RequestIdFilter`, :data:`request_id`);
* ``VARIMP_SECRET_KEY`` becomes Flask's ``secret_key``, with which Dash signs
  background-job handles: it survives restarts of Redis and of workers; it also signs
  the :data:`CLIENT_COOKIE` that names a browser (``itsdangerous``, as Flask's sessions);
* an unhandled error answers HTTP 500 with one plain sentence
  (:data:`SERVER_ERROR`), never a traceback; Flask logs it at ERROR with its
  traceback and the request id.

Nothing here reads what a user sent except the request id header, which is
checked against :data:`SAFE_REQUEST_ID` before it is used or logged.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import sys
from contextvars import ContextVar

import dash
from dash.exceptions import DependencyException, MissingCallbackContextException
from werkzeug.serving import WSGIRequestHandler

from pages._server import ratelimit

log = logging.getLogger(__name__)

#: Headers added to every response (kept when a view already set them).
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "frame-ancestors 'self'",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "SAMEORIGIN",
}
#: A Dash app's CSP: its own files, its inline scripts by their hashes ({}; Chromium finds no
#: violation on any page, tests/server/test_hygiene.py), inline styles (Dash, MathJax), data: images.
CSP = ("default-src 'self'; script-src 'self' {}; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob:; frame-ancestors 'self'")
REQUEST_ID_HEADER = "X-Request-ID"
#: Cookie naming a browser for the per-browser job cap (pages._server.jobs): 128 random bits and
#: the server's signature of them, so a value the client made up names no browser.
CLIENT_COOKIE = "varimp_client"
#: A client's request id is used only when it matches this (else a new one is made).
SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: The body of every HTTP 500 answer.
#: The answer to a request that failed because Redis (the job queue and shared store) could
#: not be reached: the same words as a job's (``celery_jobs.STORE_DOWN``), for any request.
STORE_DOWN = ("The server cannot reach its job queue and store (Redis), so this could not be "
              "done. Try again in a minute.")


def store_down(error: BaseException | None) -> bool:
    """Whether ``error`` is Redis's or the broker's (by module: this module imports neither)."""
    return error is not None and type(error).__module__.split(".")[0] in ("redis", "kombu")


SERVER_ERROR = ("Something went wrong on the server; the error was logged. "
                "Reload the page, or try other settings.")
#: The body of an HTTP 404 answer for a file the app does not have.
NOT_FOUND = "There is no such file on this server."
LOG_FORMAT = "%(asctime)s %(levelname)s [%(process)d] [%(request_id)s] %(name)s: %(message)s"

#: The id of the request being served ("-" outside requests); job processes inherit it.
request_id: ContextVar[str] = ContextVar("varimp_request_id", default="-")

_DEV_TOOLS_FLAGS = ("ui", "props_check", "serve_dev_bundles", "hot_reload", "prune_errors",
                    "validate_callbacks")


class QuietHandler(WSGIRequestHandler):
    """The dev server's request handler, whose ``Server`` header names no versions."""

    def version_string(self) -> str:
        return "varimp"


def debug_enabled() -> bool:
    """True only when ``VARIMP_DEBUG=1``."""
    return os.environ.get("VARIMP_DEBUG", "").strip() == "1"


#: ``Dash.run``'s dev-tool switches: each left as None there is read from its ``DASH_*``
#: variable again (``DASH_UI``, ``DASH_PROPS_CHECK``, ``DASH_HOT_RELOAD``,
#: ``DASH_SERVE_DEV_BUNDLES`` ...), after :func:`install` had turned it off.
_RUN_DEV_TOOLS = ("ui", "props_check", "serve_dev_bundles", "hot_reload", "prune_errors",
                  "validate_callbacks", "silence_routes_logging")


def run_options() -> dict:
    """Keyword arguments of ``app.run`` (``python app.py``): debug and every dev tool off
    unless ``VARIMP_DEBUG=1``, whatever ``DASH_*`` variables say; with it, Dash's defaults."""
    if debug_enabled():
        return {"debug": True}
    options = {"debug": False, "use_reloader": False, "use_debugger": False}
    options.update({f"dev_tools_{flag}": False for flag in _RUN_DEV_TOOLS})
    return options


class RequestIdFilter(logging.Filter):
    """Adds ``record.request_id`` (the current request's id, or ``"-"``) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id.get()
        return True


def configure_logging(level: str | None = None) -> None:
    """Log lines with the request id: a stderr handler on the root logger (once).

    When the root logger already has handlers (a host's logging set-up, pytest),
    they only get the :class:`RequestIdFilter`; otherwise a stderr handler with
    :data:`LOG_FORMAT` is added.  ``level`` (default ``VARIMP_LOG_LEVEL`` or
    INFO) applies to the root logger when this adds the handler.
    """
    root = logging.getLogger()
    for handler in root.handlers:
        if not any(isinstance(f, RequestIdFilter) for f in handler.filters):
            handler.addFilter(RequestIdFilter())
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RequestIdFilter())
    root.addHandler(handler)
    root.setLevel((level or os.environ.get("VARIMP_LOG_LEVEL") or "INFO").upper())


def client_id() -> str:
    """Who sent the request: the browser's :data:`CLIENT_COOKIE` if this server signed it,
    else its address (fresh made-up cookies do not make a client many browsers).

    A background job has no request: it gets the id its plain request read
    (:func:`_client_of_request`, in ``callback_context.custom_data``); outside both, "-".
    """
    from flask import request

    try:
        return _signed_token(request.cookies.get(CLIENT_COOKIE, "")) or \
            f"addr:{request.remote_addr}"
    except RuntimeError:
        pass
    try:
        return dash.callback_context.custom_data.get("client") or "-"
    except MissingCallbackContextException:  # no callback either (a test)
        return "-"


@dash.hooks.custom_data("client")
def _client_of_request(_context) -> str:
    """:func:`client_id`, read in the request that starts a callback: a job inherits it."""
    return client_id()


#: Key of the random secret that signs :data:`CLIENT_COOKIE` values when no
#: ``VARIMP_SECRET_KEY`` is set: kept in the shared cache, so every worker reads the same one.
CLIENT_SECRET_KEY = "varimp-client-secret"


def _signature_digest(data: bytes = b""):
    """BLAKE2b with a 24-byte digest: a signature of 32 URL-safe characters."""
    return hashlib.blake2b(data, digest_size=24)


def _client_signer():
    """The :class:`itsdangerous.Signer` of :data:`CLIENT_COOKIE` values.

    Its key is Flask's ``secret_key`` (``VARIMP_SECRET_KEY``), else a random secret shared
    through the cache (:data:`CLIENT_SECRET_KEY`, made once by whichever process asks
    first); its salt keeps these signatures apart from any other use of the key.
    """
    from flask import current_app
    from itsdangerous import Signer

    from pages._server import cache

    key = current_app.secret_key
    if not key:
        key = current_app.config.get("VARIMP_CLIENT_SECRET")
    if not key:
        store = cache.get_cache()
        store.add(CLIENT_SECRET_KEY, secrets.token_hex(32), retry=True)
        key = current_app.config["VARIMP_CLIENT_SECRET"] = (
            store.get(CLIENT_SECRET_KEY, retry=True) or secrets.token_hex(32))
    return Signer(key, salt="varimp-client", digest_method=_signature_digest)


def _signed_cookie(token: str) -> str:
    """The :data:`CLIENT_COOKIE` value of ``token``: ``token.signature``."""
    return _client_signer().sign(token).decode()


def _signed_token(cookie: str) -> str | None:
    """The token of a :data:`CLIENT_COOKIE` value ``token.signature``; None if not ours."""
    from itsdangerous import BadSignature

    if not cookie:
        return None
    try:
        return _client_signer().unsign(cookie).decode()
    except BadSignature:
        return None


def _new_request_id() -> str:
    return secrets.token_hex(8)


def malformed_callback(body) -> str | None:
    """What is wrong with a callback request's JSON body (None: the shape Dash sends).

    A crafted body (a missing key, a number where a list belongs) made Dash fail
    with HTTP 500; it is a client's error, answered with 400 and this phrase.
    """
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    if not isinstance(body.get("output"), str):
        return "'output' is not text"
    if not isinstance(body.get("outputs"), (dict, list)):
        return "'outputs' is missing"
    changed = body.get("changedPropIds", [])
    if not isinstance(changed, list) or not all(isinstance(c, str) for c in changed):
        return "'changedPropIds' is not a list of text"
    for key in ("inputs", "state"):
        items = body.get(key, [] if key == "state" else None)
        if not isinstance(items, list):
            return f"'{key}' is not a list"
        for item in items:
            for one in item if isinstance(item, list) else [item]:
                if not (isinstance(one, dict) and isinstance(one.get("id"), (str, dict))
                        and isinstance(one.get("property"), str)):
                    return f"an item of '{key}' has no id and property"
    return None


def install(app) -> None:
    """Production settings, headers, request ids and error pages for a Dash ``app``."""
    if not debug_enabled():
        # Dash reads DASH_UI, DASH_HOT_RELOAD ... from the environment when it is
        # built; in production none of them may turn a dev tool on.
        for flag in _DEV_TOOLS_FLAGS:
            app._dev_tools[flag] = False  # pylint: disable=protected-access
    policy = {}  # made at the first answer, when every callback is registered

    @app.server.after_request
    def _csp(response):
        if not policy:
            policy["csp"] = CSP.format(" ".join(sorted(set(app.csp_hashes()))))
        response.headers["Content-Security-Policy"] = policy["csp"]
        return response
    install_server(app.server, lambda: app.callback_map)
    ratelimit.install(app.server, lambda: app.callback_map, client_id)
    secret = os.environ.get("VARIMP_SECRET_KEY", "").strip()
    if secret:
        # Flask's secret_key is what Dash signs background-job handles with, before a
        # secret it would keep in Redis (lost at a Redis restart, or after 24 h).
        app.server.secret_key = secret


#: HSTS of an answer served over HTTPS: a browser then uses HTTPS only, for a year.
HSTS = "max-age=31536000; includeSubDomains"


def trusted_proxies() -> int:
    """How many proxies in front of the server set ``X-Forwarded-For``/``-Proto``
    (``VARIMP_TRUSTED_PROXIES``, default 0: the headers are ignored, as a client could forge
    them)."""
    try:
        return max(0, int(os.environ.get("VARIMP_TRUSTED_PROXIES", "0") or 0))
    except ValueError:
        return 0


class TrustedProxy:
    """WSGI middleware: behind ``VARIMP_TRUSTED_PROXIES`` = n proxies (read at every
    request), werkzeug's ``ProxyFix`` takes the client's address and scheme from the last n
    ``X-Forwarded-For`` and ``X-Forwarded-Proto`` values; with 0, from the socket."""

    def __init__(self, app):
        self.app, self._fixed = app, {}

    def __call__(self, environ, start_response):
        hops = trusted_proxies()
        if not hops:
            return self.app(environ, start_response)
        if hops not in self._fixed:
            from werkzeug.middleware.proxy_fix import ProxyFix

            self._fixed[hops] = ProxyFix(self.app, x_for=hops, x_proto=hops)
        return self._fixed[hops](environ, start_response)


def install_server(server, callback_map=None) -> None:
    """Request ids, security headers and the plain 500 answer for a Flask ``server``;
    a callback request for an output not in ``callback_map()`` (Dash's) is refused (400)."""
    from flask import g, request
    from flask.logging import default_handler
    from werkzeug.exceptions import InternalServerError

    configure_logging()
    if not isinstance(server.wsgi_app, TrustedProxy):
        server.wsgi_app = TrustedProxy(server.wsgi_app)
    # Flask's own handler would print errors a second time, without the request id.
    server.logger.removeHandler(default_handler)
    if not debug_enabled():
        server.debug = False
        server.config["PROPAGATE_EXCEPTIONS"] = False

    def _start_request():
        sent = request.headers.get(REQUEST_ID_HEADER, "")
        rid = sent if SAFE_REQUEST_ID.fullmatch(sent) else _new_request_id()
        g.varimp_request_token = request_id.set(rid)
        g.varimp_request_id = rid

    # First of all before-request functions (Dash's set-up logs with the id too).
    server.before_request_funcs.setdefault(None, []).insert(0, _start_request)

    @server.errorhandler(DependencyException)
    def _no_such_asset(_error):
        # A crafted component-suite path (an unknown library, a file it does not have).
        return NOT_FOUND, 404, {"Content-Type": "text/plain; charset=utf-8"}

    @server.before_request
    def _refuse_malformed_callbacks():
        if request.method == "POST" and request.path.endswith("/_dash-update-component"):
            try:
                body = request.get_json(silent=True)
            except RecursionError:  # JSON nested past Python's recursion limit
                body = None
            problem = malformed_callback(body)
            if problem is None and callback_map is not None and \
                    body["output"] not in callback_map():
                problem = "its output is not one of the app's callbacks"
            if problem is not None:
                log.warning("Malformed callback request refused: %s", problem)
                return (f"This request is not one the app's pages send ({problem}).", 400,
                        {"Content-Type": "text/plain; charset=utf-8"})
        return None

    @server.after_request
    def _finish_response(response):
        rid = g.get("varimp_request_id") or request_id.get()
        if rid != "-":
            response.headers[REQUEST_ID_HEADER] = rid
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if request.is_secure:  # HTTPS (behind a trusted proxy: its X-Forwarded-Proto)
            response.headers.setdefault("Strict-Transport-Security", HSTS)
        if _signed_token(request.cookies.get(CLIENT_COOKIE, "")) is None:
            token = secrets.token_hex(16)
            response.set_cookie(CLIENT_COOKIE, _signed_cookie(token), httponly=True,
                                samesite="Lax", secure=request.is_secure)
        return response

    @server.teardown_request
    def _end_request(_exc=None):
        token = g.pop("varimp_request_token", None)
        if token is not None:
            try:
                request_id.reset(token)
            except ValueError:  # set in another context (a copied one)
                request_id.set("-")

    @server.errorhandler(InternalServerError)
    def _server_error(error):
        # Flask has logged the exception (ERROR, with its traceback) before calling this.
        if store_down(getattr(error, "original_exception", None)):
            return STORE_DOWN, 503, {"Content-Type": "text/plain; charset=utf-8",
                                     "Retry-After": "60"}
        return SERVER_ERROR, 500, {"Content-Type": "text/plain; charset=utf-8"}
