"""The data choice every page works on, typed and parsed once.

A :class:`DataChoice` names the data of a view: a built-in problem (its spec,
exact or sampled, N, seed) or an uploaded table (its key, file name, target,
task, numeric columns), and the binning.  It travels in the URL (the Data
page's query keys, :data:`pages._framework.datasource.DATA_PARAMS`) and in each
page's ``{prefix}-data`` store, which holds :meth:`DataChoice.to_store`; the
server parses that store again with :meth:`DataChoice.from_store` before any
work (a browser can send anything).  :meth:`DataChoice.label` is what the
page header shows: "LED (exact, 7 inputs)" or "penguins.csv, 333 rows,
target species".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping

from varimp_core.data.prepare import DataError

from pages._framework import datasource


@dataclass(frozen=True)
class DataChoice:
    """Canonical data parameters (see :func:`pages._framework.datasource.canonical_params`).

    Build it with :meth:`from_page` (a page's URL, else the session's choice)
    or :meth:`from_store`; never from a dict the browser sent without parsing.
    """

    params: tuple[tuple[str, Any], ...]

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "DataChoice":
        return cls._from_canonical(datasource.canonical_params(params))

    @classmethod
    def _from_canonical(cls, canonical: dict) -> "DataChoice":
        """The choice of parameters already canonical (its :attr:`canonical`, memoised)."""
        choice = cls(tuple((k, tuple(v) if isinstance(v, list) else v)
                           for k, v in canonical.items()))
        choice.__dict__["canonical"] = canonical  # canonical_params is idempotent
        return choice

    @classmethod
    def from_page(cls, query: Mapping[str, Any], vi_data: Any = None
                  ) -> tuple["DataChoice", list[str]]:
        """The data of a page: its URL's data keys, else the session's ``vi-data`` choice.

        Returns the choice and sentences about link values that were ignored.
        """
        params, notes = datasource.data_params_for_page(query, vi_data)
        return cls.from_params(params), notes

    @classmethod
    def from_store(cls, store: Any) -> "DataChoice":
        """Parse a page's ``{prefix}-data`` store again (what the browser sent back).

        Raises
        ------
        DataError
            When the store does not name a valid data choice.
        """
        params = store.get("params") if isinstance(store, Mapping) else None
        if not isinstance(params, Mapping):
            raise DataError("This page lost its data choice; reload the page or choose the "
                            "data again on the Data page.")
        parsed, notes = datasource.parse_data_query(
            {k: (list(v) if isinstance(v, (list, tuple)) else v)
             for k, v in params.items() if v is not None})
        if notes:
            raise DataError(notes[0])
        return cls._from_canonical(parsed)  # parse_data_query's values are canonical

    # -- views ----------------------------------------------------------------------
    @cached_property
    def canonical(self) -> dict:
        """:func:`pages._framework.datasource.canonical_params` of the choice, computed
        once per choice (every cache key of one request reads it; do not modify it)."""
        return datasource.canonical_params(self.as_dict)

    @property
    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.params}

    def __getitem__(self, key: str) -> Any:
        return self.as_dict.get(key)

    @property
    def is_upload(self) -> bool:
        return self["source"] == "upload"

    @property
    def is_sample(self) -> bool:
        """An upload or a drawn problem (plug-in values), not an exact distribution."""
        return self.is_upload or self["sampling"] == "sample"

    @cached_property
    def binary_size(self) -> dict | None:
        """What exact-rf / exact-et can afford on this data (:func:`datasource.binary_size`:
        the Data page's job's finding, None before it ran); read once per choice."""
        return datasource.binary_size(self.as_dict)

    def task(self) -> str | None:
        """"classification" or "regression" of the target (None if unknown); a problem's is
        its definition's, an upload's the core's reading of it (cached, as :meth:`n_features`).
        Asked once per choice (the problem registry is consulted once per request)."""
        return self._task

    @cached_property
    def _task(self) -> str | None:
        if not self.is_upload:
            try:
                return datasource.problem_of(self["problem"]).task
            except ValueError:
                return None
        return datasource.upload_shape(self.as_dict)["task"]

    def query(self) -> str:
        """The URL query of this choice (no leading ``?``)."""
        return datasource.data_query(self.as_dict)

    def n_features(self) -> int | None:
        """Number of inputs p, without preparing the data (None if unknown); counted once
        per choice."""
        return self._n_features

    @cached_property
    def _n_features(self) -> int | None:
        if not self.is_upload:
            try:
                return len(datasource.problem_of(self["problem"]).variables)
            except ValueError:
                return None
        return datasource.data_feature_count(self.canonical)

    def label(self) -> str:
        """What the page header names: "LED (exact, 7 inputs)" or "file.csv, 333 rows, target y"."""
        p = self.n_features()
        inputs = "" if p is None else f", {p:,} input{'s' if p != 1 else ''}"
        if self.is_upload:
            columns = datasource.upload_columns(self["upload"])
            if columns is None:
                return f"{self['file'] or 'uploaded table'} (no longer on the server)"
            target = self["target"] or columns["columns"][-1]
            return f"{self['file'] or 'table.csv'}, {columns['rows']:,} rows, target {target}"
        spec = self["problem"]
        how = "exact" if self["sampling"] == "exact" else "sampled"
        if self["sampling"] == "sample":
            try:
                problem = datasource.problem_of(spec)
                n = self["n"] or (None if "samples" in problem.options
                                  else problem.default_samples)
            except ValueError:
                n = self["n"]
            how = f"N = {n:,}" if n else "sampled"
        return f"{spec} ({how}{inputs})"

    def load(self):
        """The core's ``PreparedData`` (cached tables; raises ``DataError`` with a sentence)."""
        return datasource.load_prepared(self.as_dict)

    def to_store(self) -> dict:
        """The page's ``{prefix}-data`` store: the parameters, p and the label."""
        return {"params": self.as_dict, "p": self.n_features(), "label": self.label()}
