"""Built-in problems without an exact distribution: Madelon, Strobl and real datasets.

Private to :mod:`varimp_core.problems.registry` (through :mod:`varimp_core.problems.specs`).
Madelon's inputs are continuous, Strobl's table would be far too large, and the
datasets bundled with scikit-learn are finite samples: each definition only
draws seeded samples.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd

from varimp_core.problems.discrete import ProblemDef, fair_bits

__all__ = ["MadelonDef", "StroblDef", "GaussDef", "RealDef", "strobl_signal_variance"]


# -- continuous or large problems without an exact distribution ----------------
class MadelonDef(ProblemDef):
    no_exact = "'madelon' has no exact distribution (its inputs are continuous)"

    def variables(self, o):
        return tuple(f"X{j + 1}" for j in range(20 + o["irrelevant"]))

    def relevant(self, o):
        return self.variables(o)[:20]

    def default_samples(self, o):
        return o["samples"]

    def details(self, o):
        return {"informative": self.variables(o)[:5], "redundant": self.variables(o)[5:10],
                "noisy_copy_of": {f"X{11 + j}": f"X{1 + j}" for j in range(10)}}

    def describe(self, o):
        return ("Madelon-like data (Guyon et al.): 32 Gaussian clusters on the vertices of a "
                "5-cube (X1..X5), randomly labelled, so Y depends on X1..X5 jointly; X6..X10 "
                "are linear combinations of them and X11..X20 are noisy copies of X1..X10; "
                f"{o['irrelevant']} Gaussian probes follow.")

    def sample(self, o, n, rng):
        """Guyon's MADELON design, written out rather than taken from ``make_classification``.

        The 32 vertices of :math:`\\{-1, 1\\}^5` are the cluster centres and each
        gets a *random* label (balanced over the classes); a cluster's points are
        :math:`c + Z A_c` with :math:`Z \\sim N(0, I_5)` and a random matrix
        :math:`A_c` of U(-1, 1) entries; X6..X10 are :math:`X_{1..5} B` with
        another such B; 1% of labels are redrawn at random.
        ``make_classification(n_informative=5, n_clusters_per_class=16)`` cannot
        be used here: with :math:`2^5` clusters it takes the vertices in sorted
        order and labels them alternately, so Y depends on X5 alone.
        """
        k, bits = o["n_classes"], 5
        centres = o["separation"] * (2.0 * fair_bits(bits) - 1.0)                     # (32, 5)
        n_clusters = centres.shape[0]
        labels = rng.permutation(np.arange(n_clusters) % k)
        cluster = rng.permutation(np.arange(n) % n_clusters)          # equal sizes
        mix = rng.uniform(-1.0, 1.0, size=(n_clusters, bits, bits))
        informative = np.einsum("ni,nij->nj", rng.normal(size=(n, bits)), mix[cluster])
        informative += centres[cluster]
        redundant = informative @ rng.uniform(-1.0, 1.0, size=(bits, bits))
        X = np.hstack([informative, redundant])
        y = labels[cluster]
        flip = rng.random(n) < 0.01
        y[flip] = rng.integers(k, size=int(flip.sum()))
        std = X.std(axis=0)
        std = np.where(std > 0, std, 1.0)   # never an exact repeat, even for tiny samples
        copies = X + rng.normal(size=X.shape) * (o["copy_noise"] * std)
        probes = rng.normal(size=(n, o["irrelevant"]))
        df = pd.DataFrame(np.hstack([X, copies, probes]), columns=list(self.variables(o)))
        df["Y"] = y.astype(np.int64)
        return df


class StroblDef(ProblemDef):
    discrete = True
    no_exact = ("'strobl' has no exact distribution table (50 features with 2 to 51 "
                "levels give about 10^65 rows)")

    def task_of(self, o):
        return o["task"]

    def variables(self, o):
        return tuple(f"X{j + 1}" for j in range(50))

    def relevant(self, o):
        return self.variables(o)[:5]

    def default_samples(self, o):
        return o["samples"]

    def details(self, o):
        order = _strobl_order(o["seed"])
        names = self.variables(o)
        return {"original_index": dict(zip(names, order)),
                "n_levels": {v: j + 1 for v, j in zip(names, order)},
                "relevant_original": order[:5]}

    def describe(self, o):
        s = ", ".join(str(j) for j in _strobl_order(o["seed"])[:5])
        return ("Li et al. (2019) simulation after Strobl et al.: 50 independent discrete "
                "features, the j-th uniform on 0..j; Y depends on the features with "
                f"j = {s} (renamed X1..X5), so X6..X50 are irrelevant despite having up to "
                f"51 levels ({o['task']}).")

    def sample(self, o, n, rng):
        order = _strobl_order(o["seed"])
        X = np.column_stack([rng.integers(0, j + 1, size=n) for j in order])
        signal = (X[:, :5] / np.array(order[:5], dtype=float)).sum(axis=1)  # sum X_j / j
        if o["task"] == "classification":
            prob = 1.0 / (1.0 + np.exp(-(2.0 / 5.0 * signal - 1.0)))       # Li 2019, sec. 4
            y = (rng.random(n) < prob).astype(np.int64)
        else:
            sd = 10.0 * math.sqrt(strobl_signal_variance(order[:5]))       # 100 * Var
            y = signal / 5.0 + rng.normal(scale=sd, size=n)
        df = pd.DataFrame(X.astype(np.int64), columns=list(self.variables(o)))
        df["Y"] = y
        return df


class GaussDef(ProblemDef):
    """Two continuous inputs, small enough for the exact binary forests (issue #15)."""

    no_exact = "'gauss' has no exact distribution (its inputs are continuous)"

    def variables(self, o):
        return ("X1", "X2")

    def relevant(self, o):
        return ("X1", "X2")

    def default_samples(self, o):
        return o["samples"]

    def describe(self, o):
        return ("Two continuous inputs: X1 and X2 independent standard normal, Y = 1 when "
                f"X1 + X2/2 + {o['noise']:g}\u00b7Z > 0 (Z standard normal), so X1 weighs twice "
                "X2. Small samples suit the exact Extra-Trees and RandomForest values.")

    def sample(self, o, n, rng):
        X = rng.normal(size=(n, 2))
        y = (X[:, 0] + 0.5 * X[:, 1] + o["noise"] * rng.normal(size=n) > 0).astype(np.int64)
        return pd.DataFrame({"X1": X[:, 0], "X2": X[:, 1], "Y": y})


@lru_cache(maxsize=64)
def _strobl_order(seed: int) -> tuple[int, ...]:
    """Original indices j: the 5 relevant (sorted) first, then the 45 others."""
    chosen = np.random.default_rng(seed).choice(10, size=5, replace=False) + 1
    relevant = sorted(int(j) for j in chosen)
    return tuple(relevant + [j for j in range(1, 51) if j not in relevant])


def strobl_signal_variance(relevant: tuple[int, ...]) -> float:
    """Exact ``Var((1/5) sum_{j in S} X_j / j)`` for independent X_j uniform on 0..j.

    ``Var(X_j) = ((j + 1)**2 - 1) / 12 = j (j + 2) / 12``, so
    ``Var(X_j / j) = (j + 2) / (12 j)``.
    """
    return sum((j + 2) / (12.0 * j) for j in relevant) / len(relevant) ** 2


# -- real datasets bundled with scikit-learn -------------------------------------
REAL_DATASETS = {
    "iris": ("classification", "Fisher's iris: 150 flowers, 4 measurements, 3 species."),
    "wine": ("classification", "Wine recognition: 178 wines, 13 chemical measurements, "
             "3 cultivars."),
    "breast_cancer": ("classification", "Wisconsin breast cancer: 569 tumours, 30 features "
                      "of cell nuclei, malignant or benign."),
    "digits": ("classification", "Handwritten digits: 1,797 images of 8x8 pixel "
               "intensities (0-16), 10 classes."),
    "diabetes": ("regression", "Diabetes: 442 patients, 10 standardised baseline "
                 "variables, disease progression after one year (regression)."),
}


@lru_cache(maxsize=8)
def _load_real(name: str) -> pd.DataFrame:
    import sklearn.datasets

    bunch = getattr(sklearn.datasets, f"load_{name}")(as_frame=True)
    frame = bunch.frame
    frame.columns = [str(c) for c in frame.columns]
    names = getattr(bunch, "target_names", None)
    if REAL_DATASETS[name][0] == "classification" and names is not None and \
            all(isinstance(v, str) for v in names):  # species, not "class 0" (issue #26)
        frame["target"] = pd.Categorical.from_codes(frame["target"].astype(int).to_numpy(),
                                                    categories=[str(v) for v in names])
    return frame


class RealDef(ProblemDef):
    target = "target"

    def __init__(self, name: str):
        self.name = name
        self.task, self.text = REAL_DATASETS[name]
        self.no_exact = f"'{name}' has no exact distribution (it is a finite real dataset)"

    def variables(self, o):
        return tuple(c for c in _load_real(self.name).columns if c != "target")

    def relevant(self, o):
        return None

    def default_samples(self, o):
        return len(_load_real(self.name))

    def describe(self, o):
        return self.text + " Bundled with scikit-learn."

    def sample(self, o, n, rng):
        frame = _load_real(self.name)
        if n >= len(frame):
            return frame.copy()
        idx = np.sort(rng.choice(len(frame), size=n, replace=False))
        return frame.iloc[idx].reset_index(drop=True)
