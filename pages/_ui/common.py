"""Helpers every page uses: safe CSV cells, a placeholder figure, cooperative Cancel.

Cooperative Cancel: Dash's own ``cancel=`` kills a background job's process, so
what it finished is lost.  Pages whose core function can stop between chunks
(Monte Carlo replicates, RS/SRS trees) instead set a flag in the shared cache
that the job's ``should_stop()`` reads; the job then returns its partial
result, which the page shows with a note.
"""

from __future__ import annotations

from . import cache

__all__ = ["neutralise_cell", "safe_csv", "placeholder_figure", "stop_key", "request_stop", "clear_stop",
           "stop_requested"]

_RISKY = ("=", "+", "-", "@", "\t", "\r")
_STOP_EXPIRE = 3600.0


def neutralise_cell(value):
    """Prefix a text cell that a spreadsheet would run as a formula with ``'``."""
    if isinstance(value, str) and value.startswith(_RISKY):
        return "'" + value
    return value


def safe_csv(df) -> str:
    """CSV of a DataFrame (no index, ``\\n`` line ends), header and text cells neutralised."""
    import pandas as pd

    df = df.copy()
    df.columns = [neutralise_cell(str(c)) for c in df.columns]
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].map(neutralise_cell)
    return df.to_csv(index=False, lineterminator="\n")


def placeholder_figure(text: str = "Computing\u2026"):
    """An empty figure carrying one line of text (before the first result, or after an error)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.update_layout(template="plotly_white", xaxis=dict(visible=False),
                      yaxis=dict(visible=False), margin=dict(l=20, r=20, t=20, b=20),
                      annotations=[dict(text=text, showarrow=False, x=0.5, y=0.5,
                                        xref="paper", yref="paper",
                                        font=dict(size=15, color="#5b6477"))])
    return fig


def stop_key(instance: str, job: str) -> str:
    """Cache key of the Cancel flag of one page view's (``instance``) job."""
    return cache.key_for("dist-stop", str(instance or ""), str(job))


def request_stop(instance: str, job: str) -> None:
    """Ask the running job of this page view to stop after its current chunk."""
    cache.put_json(stop_key(instance, job), True, expire=_STOP_EXPIRE)


def clear_stop(instance: str, job: str) -> None:
    """Forget a Cancel request (a new job is starting)."""
    cache.get_cache().delete(stop_key(instance, job), retry=True)


def stop_requested(instance: str, job: str) -> bool:
    """True once :func:`request_stop` was called for this view and job."""
    return cache.get_json(stop_key(instance, job)) is True


_PARTIAL_EXPIRE = 3600.0


class Stopped(Exception):
    """Raised inside a view computation that Cancel ended: its partial view is not stored."""

    def __init__(self, view: dict):
        super().__init__("stopped")
        self.view = view


def cached_view(key: str, compute) -> dict:
    """The view stored under ``key``, else ``compute()``, stored unless Cancel stopped it.

    No lock is taken (unlike :func:`cache.get_or_compute`): Dash kills a job whose
    inputs changed.  Two users asking at once may both compute; the values are the
    same.  The result carries ``partial`` (True when :class:`Stopped` ended it).
    """
    import json

    view = cache.get_json(key)
    if view is not None:
        return dict(view, partial=False)
    try:
        view = json.loads(json.dumps(compute()))
    except Stopped as stopped:
        return dict(json.loads(json.dumps(stopped.view)), partial=True)
    cache.put_json(key, view)
    return dict(view, partial=False)


def keep_view(view: dict, key: str, instance: str, namespace: str) -> tuple[str, bool]:
    """Where the page finds a view: its cache key, or a short-lived entry for a partial one."""
    if not view.get("partial"):
        return key, False
    partial = cache.key_for(namespace, str(instance or ""), key)
    cache.put_json(partial, view, expire=_PARTIAL_EXPIRE)
    return partial, True


def register_cancel(job_prefix: str, instance_id: str, job: str) -> None:
    """Cancel button of ``job_prefix``'s job panel -> :func:`request_stop` for this page view.

    Registers one callback; its output is a ``dcc.Store(id=f"{job_prefix}-stop-ack")``
    the page layout must hold.
    """
    from dash import Input, Output, State, callback

    from .jobs import job_ids

    @callback(Output(f"{job_prefix}-stop-ack", "data"),
              Input(job_ids(job_prefix)["cancel"], "n_clicks"),
              State(instance_id, "data"), prevent_initial_call=True)
    def _stop(n_clicks, instance):
        request_stop(instance, job)
        return n_clicks
