"""Built-in problems: exact distributions and seeded samplers.

A problem is named by a spec string, ``name`` or ``name:key=value,key=value``,
for example ``"led"``, ``"led:noise=0.1,irrelevant=17"`` or
``"xor:relevant=3"``.  :func:`parse_spec` is the one place where specs are
parsed and validated; :func:`get_problem` turns a spec into a
:class:`Problem`, which can produce its exact distribution as a
:class:`~varimp_core.data.table.DiscreteTable` (when one exists) and draw seeded
samples as a :class:`pandas.DataFrame`.

Synthetic inputs are named ``X1 .. Xp`` with the relevant ones first and the
output ``Y``; the real datasets keep scikit-learn's feature names and the
output ``target``.

Examples
--------
>>> from varimp_core.problems.registry import get_problem
>>> led = get_problem("led")
>>> table = led.exact_table()
>>> table.n_rows, float(table.weight.sum())
(10, 1.0)
>>> get_problem("led:noise=0.10,irrelevant=17").spec
'led:irrelevant=17,noise=0.1'

References
----------
.. [1] G. Louppe, L. Wehenkel, A. Sutera and P. Geurts, "Understanding variable
   importances in forests of randomized trees", NIPS 2013 (Table 1: the LED).
.. [2] A. Sutera, "Characterization of variable importance measures derived
   from decision trees", MSc thesis, ULiege 2013 (XOR and SYM).
.. [3] X. Li, Y. Wang, S. Basu, K. Kumbier and B. Yu, "A debiased MDI feature
   importance measure for random forests", NeurIPS 2019 (section 4: "strobl").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from varimp_core.problems.options import OPTION_SPECS
from varimp_core.problems.specs import PROBLEM_DEFS
from varimp_core.data.table import DiscreteTable

__all__ = ["MAX_EXACT_ROWS", "Problem", "get_problem", "list_problems", "parse_spec",
           "spec_from_options"]

#: Largest exact distribution table, in rows, that :meth:`Problem.exact_table` builds.
MAX_EXACT_ROWS = 2**20


@dataclass(frozen=True)
class Problem:
    """A built-in problem, resolved from its spec.

    Parameters
    ----------
    name : str
        Problem name, e.g. ``"led"``.
    spec : str
        Canonical spec: the name and the options that differ from their
        defaults, keys sorted, e.g. ``"led:irrelevant=17,noise=0.1"``.
    options : dict
        All options, defaults filled in.
    variables : tuple of str
        Input names, relevant ones first for synthetic problems.
    target : str
        Output name, ``"Y"`` (``"target"`` for real datasets).
    task : {"classification", "regression"}
        Kind of output.
    relevant : tuple of str or None
        The truly relevant inputs when known, None for real datasets.
    description : str
        One or two sentences for the user interface.
    has_exact : bool
        True when :meth:`exact_table` returns the exact distribution, i.e. the
        problem has one and it has at most :data:`MAX_EXACT_ROWS` rows.
    default_samples : int
        Sample size the user interface should default to.
    exact_rows : int or None, default=None
        Rows of the exact distribution table (possibly above the limit), None
        when the problem has no exact distribution.
    discrete : bool, default=False
        True when every input is discrete by construction (``led``, ``xor``,
        ``sym``, ``strobl``), whatever its number of levels.
    details : dict, default={}
        Problem-specific facts: ``copy_of`` for ``led``; ``original_index``,
        ``n_levels`` and ``relevant_original`` for ``strobl``; ``informative``,
        ``redundant`` and ``noisy_copy_of`` for ``madelon``.
    """

    name: str
    spec: str
    options: dict
    variables: tuple[str, ...]
    target: str
    task: str
    relevant: tuple[str, ...] | None
    description: str
    has_exact: bool
    default_samples: int
    exact_rows: int | None = None
    discrete: bool = False
    details: dict = field(default_factory=dict, compare=False)

    def exact_table(self) -> DiscreteTable:
        """Return the exact joint distribution of the inputs and the output.

        Returns
        -------
        table : DiscreteTable
            Distinct rows with ``exact=True``; the weights are probabilities
            summing to 1.

        Raises
        ------
        ValueError
            When the problem has no exact distribution, or when its table
            would have more than :data:`MAX_EXACT_ROWS` rows.
        """
        if self.exact_rows is None:
            raise ValueError(f"{PROBLEM_DEFS[self.name].no_exact}; "
                             "sample it with n_samples instead.")
        if self.exact_rows > MAX_EXACT_ROWS:
            raise ValueError(
                f"The exact distribution of '{self.spec}' has {self.exact_rows:,} rows, "
                f"more than the limit of {MAX_EXACT_ROWS:,} (MAX_EXACT_ROWS); use fewer "
                "variables or sample it with n_samples instead.")
        return _exact_table(self.spec)

    def sample(self, n_samples: int | None = None,
               random_state: int | None = 0) -> pd.DataFrame:
        """Draw a seeded sample.

        Parameters
        ----------
        n_samples : int, default=None
            Number of rows; None uses :attr:`default_samples`.  For a real
            dataset, None (or a size at least that of the dataset) returns the
            whole dataset and a smaller size a subsample without replacement.
        random_state : int or None, default=0
            Seed of :func:`numpy.random.default_rng`; the same seed gives the
            same sample.

        Returns
        -------
        frame : pandas.DataFrame of shape (n_samples, n_features + 1)
            Columns :attr:`variables` then :attr:`target`; integer columns for
            discrete values, floats for continuous ones.
        """
        n = self.default_samples if n_samples is None else n_samples
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n_samples must be a positive whole number, got {n_samples!r}.")
        n = int(n)
        rng = np.random.default_rng(random_state)
        return PROBLEM_DEFS[self.name].sample(self.options, n, rng)


@lru_cache(maxsize=8)
def _exact_table(spec: str) -> DiscreteTable:
    name, options = parse_spec(spec)
    definition = PROBLEM_DEFS[name]
    X, y, w, x_labels, y_labels = definition.exact(options)
    table = DiscreteTable(X, y, w, definition.variables(options), definition.target,
                          x_labels, y_labels, exact=True)
    for array in (table.X, table.y, table.weight):   # shared by the cache: read-only
        array.flags.writeable = False
    return table


def _allowed_names() -> str:
    return ", ".join(PROBLEM_DEFS)


def parse_spec(spec: str) -> tuple[str, dict]:
    """Parse and validate a problem spec.

    Parameters
    ----------
    spec : str
        ``name`` or ``name:key=value,key=value``.  Names and keys are
        case-insensitive; spaces around items are ignored.

    Returns
    -------
    name : str
        The problem name.
    options : dict
        Every option of the problem, validated, with defaults filled in.

    Raises
    ------
    ValueError
        For an unknown name, an unknown or repeated key, or a bad value; the
        message names the offending text and lists what is allowed.

    Examples
    --------
    >>> parse_spec("xor:relevant=3")
    ('xor', {'relevant': 3, 'irrelevant': 0, 'noise': 0.0})
    """
    if not isinstance(spec, str):
        raise ValueError(f"A problem spec must be a string such as 'led' or "
                         f"'led:noise=0.1', got {type(spec).__name__}.")
    head, _, rest = spec.strip().partition(":")
    name = head.strip().lower()
    if not name:
        raise ValueError(f"The problem spec is empty; choose one of: {_allowed_names()}.")
    if name not in PROBLEM_DEFS:
        raise ValueError(f"Unknown problem {head.strip()!r}; choose one of: "
                         f"{_allowed_names()}.")
    specs = {o.key: o for o in OPTION_SPECS.get(name, ())}
    keys = ", ".join(specs)
    given: dict = {}
    for item in (part.strip() for part in rest.split(",")):
        if not item:
            continue
        if not specs:
            raise ValueError(f"Problem '{name}' takes no options, got {item!r}; "
                             f"use the plain name '{name}'.")
        key, eq, value = (s.strip() for s in item.partition("="))
        key = key.lower()
        if not eq:
            raise ValueError(f"Option {item!r} of '{name}' is not of the form key=value; "
                             f"the options of '{name}' are: {keys}.")
        if key not in specs:
            raise ValueError(f"Unknown option {key!r} for problem '{name}'; "
                             f"choose among: {keys}.")
        if key in given:
            raise ValueError(f"Option '{key}' is given twice in {spec!r}; give each "
                             "option once.")
        given[key] = specs[key].parse(value, name)
    return name, {key: given.get(key, o.default) for key, o in specs.items()}


def _format(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def canonical_spec(name: str, options: dict) -> str:
    """Name plus the options that differ from their defaults, keys sorted."""
    defaults = {o.key: o.default for o in OPTION_SPECS.get(name, ())}
    items = [f"{k}={_format(options[k])}" for k in sorted(options)
             if options[k] != defaults[k]]
    return name + (":" + ",".join(items) if items else "")


def get_problem(spec: str) -> Problem:
    """Resolve a spec into a :class:`Problem`.

    Parameters
    ----------
    spec : str
        ``name`` or ``name:key=value,...``; see :func:`parse_spec`.

    Returns
    -------
    problem : Problem

    Raises
    ------
    ValueError
        When the spec is invalid (see :func:`parse_spec`).

    Examples
    --------
    >>> p = get_problem("led:copies=X5:2")
    >>> p.variables
    ('X1', 'X2', 'X3', 'X4', 'X5', 'X6', 'X7', "X5'", "X5''")
    """
    name, options = parse_spec(spec)
    d = PROBLEM_DEFS[name]
    exact_rows = d.exact_rows(options) if d.has_distribution else None
    relevant = d.relevant(options)
    return Problem(
        name=name,
        spec=canonical_spec(name, options),
        options=dict(options),
        variables=tuple(d.variables(options)),
        target=d.target,
        task=d.task_of(options),
        relevant=None if relevant is None else tuple(relevant),
        description=d.describe(options),
        has_exact=exact_rows is not None and exact_rows <= MAX_EXACT_ROWS,
        default_samples=int(d.default_samples(options)),
        exact_rows=exact_rows,
        discrete=d.discrete,
        details=d.details(options),
    )


def list_problems() -> list[dict]:
    """Describe every built-in problem and its options, for menus and help.

    Returns
    -------
    problems : list of dict
        One dict per problem with keys ``name``, ``description`` (for the
        default options) and ``options``: a list of dicts with keys ``key``,
        ``default``, ``type`` (``"int"``, ``"float"``, ``"choice"`` or
        ``"copies"``), ``help`` and ``choices`` (a list for ``"choice"``
        options, else None).
    """
    out = []
    for name, d in PROBLEM_DEFS.items():
        _, defaults = parse_spec(name)
        options = [{"key": o.key, "default": o.default, "type": o.type, "help": o.help,
                    "choices": list(o.choices) if o.choices else None}
                   for o in OPTION_SPECS.get(name, ())]
        out.append({"name": name, "description": d.describe(defaults), "options": options})
    return out


def spec_from_options(name: str, options: dict) -> str:
    """A canonical problem spec from a name and option values (None or blank ones skipped).

    Raises
    ------
    ValueError
        With a sentence, for an invalid value (:func:`parse_spec`).

    Examples
    --------
    >>> spec_from_options("led", {"noise": 0.1, "irrelevant": None})
    'led:noise=0.1'
    """
    items = [f"{k}={v}" for k, v in options.items() if v is not None and str(v).strip() != ""]
    spec = name + (":" + ",".join(items) if items else "")
    parse_spec(spec)
    return get_problem(spec).spec
