"""How long a server keeps uploads, and how much one browser may keep: the rules and sentences.

A shared server stores every uploaded table (as text) for a limited time, the
time-to-live :math:`\\tau` (24 h by default), and holds each browser to a quota
:math:`Q` of stored bytes.  A browser's holding is the set of distinct contents
it uploaded that have not expired; identical contents count once, since the
server stores them once.  A new table of :math:`s` bytes with content hash
:math:`h` is admitted when

.. math::

    \\sum_{h' \\in H(t),\\ h' \\ne h} s_{h'} + s \\le Q,

with :math:`H(t)` the hashes whose expiry time is later than now, :math:`t`.

The web layer does the storing (``pages._server.cache``); this module only decides
and words the answer, with no I/O.
"""

from __future__ import annotations

from varimp_core.data.csvfile import DataError

__all__ = ["kept_for", "expired_text", "quota_text", "store_full_text", "admit"]

#: A browser's holding: content hash -> [stored bytes, expiry time in seconds since the epoch].
Holding = dict[str, list[float]]


def kept_for(seconds: int) -> str:
    """How long something is kept, in words: ``"24 h"``, ``"90 s"``.

    Parameters
    ----------
    seconds : int
        The time-to-live.

    Returns
    -------
    text : str
        Hours (``:g``) from one hour up, else seconds.
    """
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:,} s"


def expired_text(ttl: int) -> str:
    """The sentence for an upload key that names nothing (any more), with the time-to-live."""
    return (f"The uploaded table is no longer on the server: uploads are kept {kept_for(ttl)}, "
            "then expire; upload the file again.")


def quota_text(used: int, size: int, quota: int, ttl: int) -> str:
    """The sentence refusing a table that would take a browser over its quota.

    Parameters
    ----------
    used : int
        Bytes the browser's other unexpired uploads take.
    size : int
        Bytes the new table takes once read (stored).
    quota : int
        Bytes one browser may keep, :math:`Q`.
    ttl : int
        Seconds an upload is kept, :math:`\\tau`.
    """
    return (f"This table takes {size / 2**20:.1f} MiB once read and your uploads already "
            f"take {used / 2**20:.1f} MiB of the {quota / 2**20:g} MiB one browser may keep; "
            f"uploads are kept {kept_for(ttl)}: wait for older ones to expire or use a "
            "smaller table.")


def store_full_text(used: int, size: int, quota: int, ttl: int) -> str:
    """The sentence refusing a table that the server's upload store has no room for.

    The store evicts nothing (no upload pushes out another user's table), so when every
    client's unexpired tables together would pass its budget, the new one is refused.
    Arguments as :func:`quota_text`, with ``quota`` the store's budget.
    """
    return (f"The server holds {used / 2**20:.1f} MiB of uploaded tables, and this one "
            f"({size / 2**20:.1f} MiB once read) would pass the {quota / 2**20:g} MiB it keeps "
            f"for everyone's uploads; they are kept {kept_for(ttl)}. Try again later, or run "
            "varimp on your own machine (`make run`).")


def admit(holding: Holding | None, digest: str, size: int, *, quota: int, ttl: int,
          now: float, sentence=quota_text) -> Holding:
    """A browser's holding after it stores one more table, or a refusal.

    Parameters
    ----------
    holding : dict or None
        The browser's holding (see :data:`Holding`); None for none yet.
    digest : str
        Content hash :math:`h` of the new table.
    size : int
        Its stored bytes, :math:`s`.
    quota, ttl : int
        :math:`Q` in bytes and :math:`\\tau` in seconds.
    now : float
        The time :math:`t`, seconds since the epoch.
    sentence : callable
        ``sentence(used, size, quota, ttl)`` of the refusal (:func:`quota_text`, a browser's).

    Returns
    -------
    holding : dict
        The unexpired entries with ``digest`` set to ``[size, now + ttl]`` (an
        upload of a content already held renews it and counts once).

    Raises
    ------
    DataError
        When the sum of the module's inequality passes :math:`Q`, with :func:`quota_text`.
    """
    held = {h: v for h, v in (holding or {}).items() if v[1] > now}
    used = int(sum(v[0] for h, v in held.items() if h != digest))
    if used + size > quota:
        raise DataError(sentence(used, size, quota, ttl))
    held[digest] = [size, now + ttl]
    return held
