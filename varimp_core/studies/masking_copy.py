"""A noisy copy of one input of a :class:`~varimp_core.data.table.DiscreteTable`.

:func:`add_noisy_copy` is the textbook way to watch one variable mask another
(Louppe et al. 2013, section 5.3), next to the masking studies of
:mod:`varimp_core.studies.masking`.  :func:`masking_table` builds the exact table
such a study runs on: a small built-in problem (:data:`MASKING_PROBLEMS`), fair
irrelevant bits and optionally a noisy copy; :func:`split_masking_spec` reads a
spec back into its base and its number of irrelevant bits.
"""

from __future__ import annotations

import numpy as np

from varimp_core.studies.masking_tables import check_table
from varimp_core.data.table import DiscreteTable
from varimp_core.problems.registry import get_problem, parse_spec, spec_from_options

__all__ = ["add_noisy_copy", "masking_table", "masking_data", "masking_spec", "study_spec",
           "split_masking_spec", "MASKING_PROBLEMS", "NUMERIC_MASKING_PROBLEMS", "MAX_IRRELEVANT",
           "UPLOAD", "needs_binary_method"]

#: Built-in problems whose exact distribution is small enough for every K and depth at once.
MASKING_PROBLEMS = ("led", "xor", "sym")
#: Small numeric built-in problems: their curves come from the exact binary forests alone.
NUMERIC_MASKING_PROBLEMS = ("gauss",)
#: Irrelevant fair bits a masking study adds at most.
MAX_IRRELEVANT = 6
#: The problem of a masking study of the user's uploaded table, studied as it is.
UPLOAD = "upload"


def split_masking_spec(text: str) -> tuple[str, int]:
    """``"led:irrelevant=3,noise=0.1"`` -> ``("led:noise=0.1", 3)``.

    Raises
    ------
    ValueError
        With a sentence, when ``text`` is not a spec of :data:`MASKING_PROBLEMS` with at
        most :data:`MAX_IRRELEVANT` irrelevant bits.
    """
    name, options = parse_spec(str(text))
    if name not in MASKING_PROBLEMS + NUMERIC_MASKING_PROBLEMS:
        raise ValueError(f"A masking study needs a built-in problem with a small exact "
                         f"distribution (LED, XOR or SYM) or small numeric data (gauss, "
                         f"with exact-rf or exact-et), not {name}.")
    irrelevant = int(options.pop("irrelevant", 0))
    if irrelevant > MAX_IRRELEVANT:
        raise ValueError(f"A masking study adds at most {MAX_IRRELEVANT} irrelevant "
                         f"variables, not {irrelevant}.")
    return spec_from_options(name, options), irrelevant


def masking_spec(base: str, irrelevant: int) -> str:
    """The canonical spec of problem ``base`` with ``irrelevant`` fair bits added."""
    name, options = parse_spec(base)
    return spec_from_options(name, {**options, "irrelevant": irrelevant or None})


def study_spec(settings) -> str:
    """The problem of a masking study's settings with its irrelevant bits, or :data:`UPLOAD`.

    >>> study_spec({"problem": "xor", "irrelevant": 2}), study_spec({"problem": "upload"})
    ('xor:irrelevant=2', 'upload')
    """
    if settings["problem"] == UPLOAD:
        return UPLOAD
    return masking_spec(settings["problem"], settings["irrelevant"])


def masking_table(base: str, irrelevant: int = 0, copy: str | None = None,
                  flip: float = 0.1) -> DiscreteTable:
    """The exact table of problem ``base`` with ``irrelevant`` fair bits and, when ``copy``
    names an input, a copy of it flipped with probability ``flip``.

    The copy (``"X5'"`` for X5) comes right after the relevant variables, so the colours
    of X1..Xr never change when irrelevant variables come and go.

    Examples
    --------
    >>> masking_table("xor", 1, copy="X1").variables
    ('X1', 'X2', "X1'", 'X3')
    """
    problem = get_problem(masking_spec(base, irrelevant))
    table = problem.exact_table()
    if copy is not None:
        table = add_noisy_copy(table, copy, flip, position=len(problem.relevant or ()))
    return table


def needs_binary_method(base) -> bool:
    """Whether problem ``base`` (a spec such as ``"gauss:samples=200"``) has continuous
    inputs, which only the exact binary forests (``exact-rf``, ``exact-et``) take.

    Examples
    --------
    >>> needs_binary_method("gauss:samples=200"), needs_binary_method("led")
    (True, False)
    """
    try:
        return parse_spec(str(base))[0] in NUMERIC_MASKING_PROBLEMS
    except ValueError:
        return False


def masking_data(base: str, irrelevant: int = 0, copy: str | None = None, flip: float = 0.1):
    """What a masking study of problem ``base`` runs on.

    The exact table of :func:`masking_table` for LED, XOR and SYM; for a numeric problem
    (:data:`NUMERIC_MASKING_PROBLEMS`) its sampled rows as prepared data, which only the
    exact binary forests (``exact-rf``, ``exact-et``) take, with no bits or copy added.
    """
    if not needs_binary_method(base):
        return masking_table(base, irrelevant, copy, flip)
    if irrelevant or copy is not None:
        raise ValueError(f"{base} has continuous inputs: the Masking page adds no irrelevant "
                         "bits or noisy copy to it; set them to 0 and No copy.")
    from varimp_core.api import load_data

    return load_data(problem=base)


def add_noisy_copy(table: DiscreteTable, variable, flip: float = 0.0, *,
                   name: str | None = None, position: int | None = None) -> DiscreteTable:
    """Add a copy of one input whose value is changed with probability ``flip``.

    Parameters
    ----------
    table : DiscreteTable
    variable : str or int
        Name or index of the input to copy.
    flip : float, default=0.0
        Probability, in [0, 1), that the copy differs from the original; the
        changed value is uniform over the other levels (for a binary input:
        the other value).  0 gives an exact copy; for a binary input 0.5 gives
        an independent fair bit.
    name : str, optional
        Name of the copy; default the original's name with a prime, ``"X5'"``.
    position : int, optional
        Column index of the copy; default last.

    Returns
    -------
    DiscreteTable
        Each row is split into one row per value of the copy, with weight
        ``w (1 - flip)`` for the unchanged value and ``w flip / (L - 1)`` for
        each other value (L levels).  The noise is integrated out, not drawn:
        for an exact table the result is the exact joint distribution (joint
        probabilities multiply); for a sample, the expected counts.

    Notes
    -----
    Louppe et al. (2013, section 5.3): with :math:`X_2` a slightly noisy copy
    of :math:`X_1`, totally randomized trees give both nearly half of
    :math:`I(X_1;Y)`, while at K=2 :math:`X_1` always wins the root and the
    copy's importance drops to :math:`I(X_2;Y \\mid X_1) = 0` -- it is masked.

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> t = add_noisy_copy(get_problem("xor").exact_table(), "X1", 0.1)
    >>> t.variables, t.n_rows
    (('X1', 'X2', "X1'"), 8)
    """
    table = check_table(table)
    if isinstance(variable, str):
        if variable not in table.variables:
            raise ValueError(f"Unknown variable {variable!r}; choose one of: "
                             f"{', '.join(table.variables)}.")
        j = table.variables.index(variable)
    elif isinstance(variable, (int, np.integer)) and not isinstance(variable, bool) \
            and 0 <= variable < table.n_features:
        j = int(variable)
    else:
        raise ValueError(f"The variable to copy must be a name or an index in "
                         f"0..{table.n_features - 1}, got {variable!r}.")
    try:
        flip = float(flip)
    except (TypeError, ValueError):
        raise ValueError(f"The copy's noise must be a probability, got {flip!r}.") from None
    if not 0.0 <= flip < 1.0:
        raise ValueError(f"The copy's noise must be a probability from 0 to below 1, got {flip:g}.")
    levels = int(table.n_levels[j])
    if flip > 0 and levels < 2:
        raise ValueError(f"{table.variables[j]} is constant, so a noisy copy cannot differ "
                         "from it.")
    if name is None:
        name = table.variables[j] + "'"
        while name in table.variables:
            name += "'"
    elif name in table.variables:
        raise ValueError(f"There is already a variable named {name!r}.")
    p = table.n_features
    pos = p if position is None else int(position)
    if not 0 <= pos <= p:
        raise ValueError(f"The copy's position must be from 0 to {p}, got {position!r}.")

    n = table.n_rows
    values = np.arange(levels)
    copy = np.tile(values, n)                                  # (n * L,)
    original = np.repeat(table.X[:, j], levels)
    per_level = flip / (levels - 1) if levels > 1 else 0.0
    factor = np.where(copy == original, 1.0 - flip, per_level)
    weight = np.repeat(table.weight, levels) * factor
    X = np.insert(np.repeat(table.X, levels, axis=0), pos, copy, axis=1)
    variables = table.variables[:pos] + (name,) + table.variables[pos:]
    x_labels = table.x_labels[:pos] + (table.x_labels[j],) + table.x_labels[pos:]
    return DiscreteTable(X, np.repeat(table.y, levels), weight, variables, table.target,
                         x_labels, table.y_labels, table.exact).compressed()
