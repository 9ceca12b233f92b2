"""Every per-request limit of the server, read from the environment on each call.

One place for the caps that protect a shared server from one request: pages
read them here for their controls' ``max``, their help lines ("At most 5,000
trees on this server.") and their checks, and the Data page lists them all
(:func:`limits_text`) so users see them before they click.

``VARIMP_MAX_UPLOAD_BYTES``, ``VARIMP_MAX_COLUMNS``, ``VARIMP_MAX_CELLS``
    An upload's bytes (25 MiB), columns (1,000) and cells, rows x columns (5,000,000).
``VARIMP_MAX_TREES``
    Trees of one forest; default 10,000, at most 100,000.
``VARIMP_MAX_EXACT_FEATURES``
    Inputs of the exact method; default 20 (at most ``MAX_SUBSET_FEATURES``).
``VARIMP_MAX_REPLICATES``
    Monte Carlo replicates (and repetitions) of one run; default 2,000.
``VARIMP_MAX_MEMORY_MB``
    Memory one background job may add to its process; default 4,096 MB.
``VARIMP_JOB_TIMEOUT``
    Seconds one background job may run; default 600.
``VARIMP_JOB_STALL_AFTER``
    Seconds a started Diskcache job may go without a progress report and without using
    the processor before it is taken for stuck and stopped; default 6, at most 60.
``VARIMP_UPLOAD_TTL``, ``VARIMP_RESULT_TTL``, ``VARIMP_MAX_CLIENT_UPLOAD_BYTES``
    Seconds an upload (24 h) and a result (7 days) are kept; bytes of parsed tables
    one browser may keep at once (256 MiB).  See :func:`pages._server.cache.put_table`.
``VARIMP_UPLOAD_STORE_BYTES``
    Bytes of parsed tables the server keeps for every browser together (4 GiB); the
    upload store evicts nothing, so past it new uploads are refused with a sentence.

The core refuses no size (a notebook reads any table): the server passes the upload
limits in (``read_csv_bytes``, ``prepare_table``); the pages and :mod:`pages._server.jobs`
enforce the others.  A value that is not a positive whole number means the default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from varimp_core.exact.information import MAX_SUBSET_FEATURES

#: Longest column name of an upload, in characters (the URL keeps names of at most 200).
MAX_NAME_LENGTH = 200


@dataclass(frozen=True)
class Limit:
    """One limit: its environment variable, default and the core's ceiling (if any)."""

    env: str
    default: int
    ceiling: int | None = None
    what: str = ""


#: The limits by short name; :func:`value` reads one.
LIMITS: dict[str, Limit] = {
    "upload_bytes": Limit("VARIMP_MAX_UPLOAD_BYTES", 25 << 20, None, "bytes per upload"),
    "columns": Limit("VARIMP_MAX_COLUMNS", 1000, None, "columns per table"),
    "cells": Limit("VARIMP_MAX_CELLS", 5_000_000, None, "cells (rows \u00d7 columns) per table"),
    "trees": Limit("VARIMP_MAX_TREES", 10_000, 100_000, "trees per forest"),
    "exact_features": Limit("VARIMP_MAX_EXACT_FEATURES", MAX_SUBSET_FEATURES,
                            MAX_SUBSET_FEATURES, "inputs for the exact method"),
    "replicates": Limit("VARIMP_MAX_REPLICATES", 2000, None, "Monte Carlo replicates"),
    "mc_trees": Limit("VARIMP_MAX_MC_TREES", 1000, None, "trees per Monte Carlo forest"),
    "sample_cells": Limit("VARIMP_MAX_SAMPLE_CELLS", 50_000_000, None,
                          "cells (rows \u00d7 columns) of a sampled problem"),
    "mc_samples": Limit("VARIMP_MAX_MC_SAMPLES", 100_000, None, "rows per Monte Carlo sample"),
    "mc_total_trees": Limit("VARIMP_MAX_MC_TOTAL_TREES", 500_000, None, "trees per run"),
    "sweep_values": Limit("VARIMP_MAX_SWEEP_VALUES", 8, None, "values per sweep"),
    "memory_mb": Limit("VARIMP_MAX_MEMORY_MB", 4096, None, "MB of memory per job"),
    "job_timeout": Limit("VARIMP_JOB_TIMEOUT", 600, None, "seconds per job"),
    "job_stall_after": Limit("VARIMP_JOB_STALL_AFTER", 6, 60,
                             "seconds a job may go without progress or processor time"),
    # The Measures page starts three jobs at once; a fourth covers a control changed while
    # its previous job is still being stopped.
    "client_jobs": Limit("VARIMP_MAX_JOBS_PER_CLIENT", 4, None, "jobs at once per browser"),
    "upload_ttl": Limit("VARIMP_UPLOAD_TTL", 24 * 3600, None, "seconds an upload is kept"),
    "result_ttl": Limit("VARIMP_RESULT_TTL", 7 * 24 * 3600, None, "seconds a result is kept"),
    "client_upload_bytes": Limit("VARIMP_MAX_CLIENT_UPLOAD_BYTES", 256 << 20, None,
                                 "bytes of stored uploads per browser"),
    "upload_store_bytes": Limit("VARIMP_UPLOAD_STORE_BYTES", 4 << 30, None,
                                "bytes of stored uploads, every browser's together"),
}


def value(name: str) -> int:
    """Limit ``name`` now: its variable when that is a positive whole number, else the default."""
    limit = LIMITS[name]
    try:
        number = int(os.environ.get(limit.env, "").strip())
    except ValueError:
        return limit.default
    if number <= 0:
        return limit.default
    return min(number, limit.ceiling) if limit.ceiling is not None else number


def env_seconds(name: str, default: float) -> float:
    """Seconds read from environment variable ``name``; ``default`` unless a positive number."""
    try:
        number = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return number if number > 0 else default


def _capped(name: str, page_cap: int | None) -> int:
    v = value(name)
    return v if page_cap is None else min(v, int(page_cap))


def max_upload_bytes() -> int:
    """Largest uploaded file in bytes (``VARIMP_MAX_UPLOAD_BYTES``)."""
    return value("upload_bytes")


def max_columns() -> int:
    """Most columns of an uploaded table (``VARIMP_MAX_COLUMNS``)."""
    return value("columns")


def max_cells() -> int:
    """Most cells, rows times columns, of a table (``VARIMP_MAX_CELLS``)."""
    return value("cells")


def upload_rule() -> str:
    """``"CSV files up to 25 MiB and 5,000,000 cells (rows × columns)."``"""
    return (f"CSV files up to {max_upload_bytes() / 2**20:g} MiB and {max_cells():,} cells "
            "(rows \u00d7 columns).")


def max_trees(page_cap: int | None = None) -> int:
    """Most trees of one forest: ``VARIMP_MAX_TREES``, or a page's own lower cap."""
    return _capped("trees", page_cap)


def max_exact_features() -> int:
    """Most inputs the exact method accepts (``VARIMP_MAX_EXACT_FEATURES``)."""
    return value("exact_features")


def max_replicates(page_cap: int | None = None) -> int:
    """Most Monte Carlo replicates or repetitions of one run (``VARIMP_MAX_REPLICATES``)."""
    return _capped("replicates", page_cap)


def max_memory_mb() -> int:
    """Memory in MB one background job may add to its process (``VARIMP_MAX_MEMORY_MB``)."""
    return value("memory_mb")


def n_jobs() -> int | None:
    """Processes one job grows its trees with (``VARIMP_N_JOBS``: -1 every core; unset: 1)."""
    try:
        value = int(os.environ.get("VARIMP_N_JOBS", "").strip())
    except ValueError:
        return None
    return value or None


def max_client_jobs() -> int:
    """Background jobs one browser may run at once (``VARIMP_MAX_JOBS_PER_CLIENT``)."""
    return value("client_jobs")


def job_timeout() -> int:
    """Seconds a background job may run before it is stopped (``VARIMP_JOB_TIMEOUT``)."""
    return value("job_timeout")


def job_stall_after() -> int:
    """Seconds a started job may go with no progress report and no processor time before it
    is stopped as stuck (``VARIMP_JOB_STALL_AFTER``, 6; at most 60)."""
    return value("job_stall_after")


# -- for the pages ---------------------------------------------------------------------


def at_most_help(limit: int, what: str = "trees") -> str:
    """``"At most 5,000 trees on this server."`` for a control's help line."""
    return f"At most {limit:,} {what} on this server."


def limits_text() -> str:
    """All limits as one sentence for the Data page."""
    mib = max_upload_bytes() / 2**20
    return (f"Limits on this server: files up to {mib:g} MiB, {max_columns():,} columns and "
            f"{max_cells():,} cells (rows \u00d7 columns); the exact method up to "
            f"{max_exact_features()} inputs; {max_trees():,} trees per forest; "
            f"{max_replicates():,} Monte Carlo replicates; {max_memory_mb():,} MB of memory "
            f"and {job_timeout():,} s per computation.")
