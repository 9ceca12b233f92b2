"""Rate limits on uploads and job starts, per client address and per browser (#27.6).

A browser is named by its signed cookie (:func:`pages._server.hygiene.client_id`), but a
fresh cookie costs one GET: a client that drops its cookie is a new browser at every request.
So each kind of request is limited twice, by the browser and by the address it comes from
(``request.remote_addr``; behind ``VARIMP_TRUSTED_PROXIES`` proxies, the address werkzeug's
``ProxyFix`` reads from ``X-Forwarded-For``: see :class:`pages._server.hygiene.TrustedProxy`).

The limits are Flask-Limiter's (moving windows of the ``limits`` package), kept in Redis when
``REDIS_URL`` is set (every worker counts together) and otherwise in each process's memory
(under gunicorn with w workers an address gets up to w times the figure).  A request over a
limit is answered 429 with a sentence and a ``Retry-After`` header; the app's script shows the
sentence on the page (``assets/varimp.js``).

==========================  ============================================  ==================
kind                        limits (environment variable, default)        counted by
==========================  ============================================  ==================
upload (a ``contents``      ``VARIMP_UPLOAD_RATE``: 10 per minute,         address, browser
callback)                   60 per hour; ``VARIMP_UPLOAD_MIB_RATE``:
                            512 MiB per hour of request bodies
job start (a background     ``VARIMP_JOB_RATE``: 120 per minute,           address (x 4), browser
callback without a job      1200 per hour
handle)
==========================  ============================================  ==================

Addresses get four times the browser's job starts: a classroom behind one NAT shares one.
"""

from __future__ import annotations

import math
import os

__all__ = ["RATES", "request_kind", "install", "limited_text"]

#: The default limits of each kind, in the ``limits`` package's notation.
RATES = {
    "upload": ("VARIMP_UPLOAD_RATE", "10 per minute; 60 per hour"),
    "upload_mib": ("VARIMP_UPLOAD_MIB_RATE", "512 per hour"),
    "job": ("VARIMP_JOB_RATE", "120 per minute; 1200 per hour"),
}


def rate(kind: str, factor: int = 1) -> str:
    """The limit of ``kind`` now (its variable, else the default), each count times ``factor``."""
    env, default = RATES[kind]
    text = os.environ.get(env, "").strip() or default
    from limits import parse_many

    try:
        parsed = parse_many(text)
    except ValueError:
        parsed = parse_many(default)
    return "; ".join(f"{item.amount * factor} per {item.multiples} {item.GRANULARITY.name}"
                     for item in parsed)


def request_kind(body, args, callback_map) -> str | None:
    """``"upload"``, ``"job"`` or None for a ``/_dash-update-component`` request.

    Parameters
    ----------
    body : dict
        The request's JSON (already checked by :func:`pages._server.hygiene.malformed_callback`).
    args : mapping
        The query string: a job's polls carry its ``cacheKey`` and ``job``.
    callback_map : dict
        Dash's callbacks by output; a background callback's entry has ``background``.
    """
    if args.get("cacheKey") or args.get("job"):
        return None  # a poll of a job already started (its body repeats the first one's)
    changed = body.get("changedPropIds") or []
    if any(isinstance(c, str) and c.endswith(".contents") for c in changed):
        return "upload"
    entry = callback_map.get(body.get("output")) if callback_map else None
    if entry and entry.get("background"):
        return "job"
    return None


def limited_text(kind: str, retry_after: int | None) -> str:
    """The sentence of a 429 answer."""
    what = "uploads" if kind == "upload" else "computations started"
    wait = f" in {retry_after} s" if retry_after else " in a minute"
    return (f"Too many {what} from this browser or network in a short time; the server keeps "
            f"room for everyone. Try again{wait}.")


def install(server, callback_map, browser) -> None:
    """Limit uploads and job starts on Dash's callback route of Flask ``server``.

    ``callback_map()`` returns Dash's callback map (read at each request: pages register
    callbacks after the server is made); ``browser()`` names the request's browser
    (:func:`pages._server.hygiene.client_id`).
    """
    from flask import g, request
    from flask_limiter import Limiter
    from flask_limiter.errors import RateLimitExceeded
    from flask_limiter.util import get_remote_address

    url = os.environ.get("REDIS_URL") or ""
    limiter = Limiter(get_remote_address, app=server,
                      storage_uri=url if url.startswith(("redis://", "rediss://")) else "memory://",
                      headers_enabled=True, swallow_errors=True, key_prefix="varimp-rate",
                      strategy="moving-window")

    def kind() -> str | None:
        if "varimp_rate_kind" not in g:
            g.varimp_rate_kind = None
            if request.method == "POST" and request.path.endswith("/_dash-update-component"):
                body = request.get_json(silent=True)
                if isinstance(body, dict):
                    g.varimp_rate_kind = request_kind(body, request.args, callback_map())
        return g.varimp_rate_kind

    def mib() -> int:
        return max(1, math.ceil((request.content_length or 0) / 2**20))

    limits = [
        limiter.limit(lambda: rate("upload"), scope="upload-address",
                      exempt_when=lambda: kind() != "upload"),
        limiter.limit(lambda: rate("upload"), key_func=browser, scope="upload-browser",
                      exempt_when=lambda: kind() != "upload"),
        limiter.limit(lambda: rate("upload_mib"), scope="upload-mib-address", cost=mib,
                      exempt_when=lambda: kind() != "upload"),
        limiter.limit(lambda: rate("job", 4), scope="job-address",
                      exempt_when=lambda: kind() != "job"),
        limiter.limit(lambda: rate("job"), key_func=browser, scope="job-browser",
                      exempt_when=lambda: kind() != "job"),
    ]
    for endpoint, view in list(server.view_functions.items()):
        if endpoint.endswith("_dash-update-component") or \
                getattr(view, "__name__", "") == "dispatch":
            for limit in limits:
                view = limit(view)
            server.view_functions[endpoint] = view

    @server.errorhandler(RateLimitExceeded)
    def _too_many(error):
        retry = None
        try:
            retry = int(error.retry_after) if getattr(error, "retry_after", None) else None
        except (TypeError, ValueError):
            retry = None
        headers = {"Content-Type": "text/plain; charset=utf-8"}
        if retry:
            headers["Retry-After"] = str(retry)
        return limited_text(kind() or "job", retry), 429, headers
