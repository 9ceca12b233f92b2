"""The teaching texts of varimp: the formulas of the papers and the demos, with their links.

Each formula is ``(title, Markdown with TeX, [(link text, href)])`` and each demo
``(title, sentences, [(link text, href)])``; a href is a varimp page and the URL query that
sets it up, so a demo is a link to share.  Every number a demo states is checked against
theory, the papers or a brute-force oracle in ``tests/pages/test_learn.py``.

References
----------
.. [1] G. Louppe, L. Wehenkel, A. Sutera and P. Geurts, "Understanding variable
   importances in forests of randomized trees", NIPS 2013.
.. [2] A. Sutera, "Characterization of variable importance measures derived from decision
   trees", MSc thesis, ULiege 2013 (XOR and SYM).
.. [3] P. Geurts, "Random forests variable importances", slides 2016.
"""

from __future__ import annotations

__all__ = ["FORMULAS", "PRESETS", "TEACH"]

#: (title, Markdown with TeX, [(link text, href)]): one card per formula.
FORMULAS = (
    ("Mean decrease of impurity (MDI)", r"""
$$
\mathrm{Imp}(X_m) = \frac{1}{N_T} \sum_{T} \sum_{t \in T:\ v(s_t) = X_m} p(t)\, \Delta i(s_t, t)
$$

Over the $N_T$ trees of a forest, add up the impurity decrease $\Delta i(s_t, t)$ of every node
$t$ that splits on $X_m$, weighted by the fraction $p(t)$ of the samples that reach it. With the
Shannon entropy as impurity the unit is the bit.
""", [("Importances", "/importances")]),
    ("Eqn 3: totally randomized trees (Theorem 1)", r"""
$$
\mathrm{Imp}(X_m) = \sum_{k=0}^{p-1} \frac{1}{C_p^k}\, \frac{1}{p-k}
  \sum_{B \in \mathcal{P}_k(V^{-m})} I(X_m; Y \mid B)
$$

For infinitely many totally randomized ($K = 1$), fully developed trees on infinite data, the
importance of $X_m$ is a weighted sum of its conditional mutual information with $Y$ given
every subset $B$ of the other variables, grouped by the size $k$ of $B$ (the degree).
""", [("Decomposition", "/decomposition?K=1")]),
    ("Theorem 2: the importances sum to I(X; Y)", r"""
$$
\sum_{m=1}^{p} \mathrm{Imp}(X_m) = I(X_1, \dots, X_p; Y)
$$

For any fully developed trees in asymptotic conditions, whatever $K$, the importances share
out exactly the information the inputs carry about the output.
""", [("Importances", "/importances"), ("Masking", "/masking")]),
    ("Proposition 6: pruning keeps the first terms", r"""
$$
\mathrm{Imp}_{q}(X_m) = \sum_{k=0}^{q-1} \frac{1}{C_p^k}\, \frac{1}{p-k}
  \sum_{B \in \mathcal{P}_k(V^{-m})} I(X_m; Y \mid B)
$$

Totally randomized trees stopped at depth $q$ keep the terms of degree $k < q$ of Eqn 3
(Proposition 7: the same as fully grown trees on random subspaces of $q$ variables). Below full
depth Theorem 2 no longer holds, and the importances depend on irrelevant variables.
""", [("Decomposition", "/decomposition?K=1&depth=2"),
      ("Masking, against depth", "/masking?axis=depth")]),
    ("Eqn 3 is a Shapley value", r"""
$$
\frac{1}{C_p^k\,(p-k)} = \frac{k!\,(p-k-1)!}{p!}
$$

$$
I(X_m; Y \mid B) = v(B \cup \{X_m\}) - v(B), \qquad v(S) = I(Y; X_S)
$$

The weights of Eqn 3 are the Shapley weights of a coalition of size $k$, and each term is the
marginal contribution of $X_m$ to the coalition $B$ (chain rule of mutual information). So
$\mathrm{Imp}(X_m)$ is the Shapley value of $X_m$ in the game $v(S) = I(Y; X_S)$: efficiency is
Theorem 2, and a null player is an irrelevant variable (Theorem 3).
""", [("Decomposition", "/decomposition?K=1")]),
    ("Masking for K > 1", r"""
$$
K = 1:\quad \mathrm{Imp}(X_1) = \tfrac12 I(X_1; Y) + \tfrac12 I(X_1; Y \mid X_2), \quad
  \mathrm{Imp}(X_2) = \tfrac12 I(X_2; Y)
$$

$$
K = 2:\quad \mathrm{Imp}(X_1) = I(X_1; Y), \quad \mathrm{Imp}(X_2) = I(X_2; Y \mid X_1) = 0
$$

When the best of $K$ drawn variables wins each node, strong variables take the top of the trees
and the others only split below them, where little is left to explain. Above, $X_1$ determines
$Y$ and $X_2$ is a slightly noisy copy of it: at $K = 2$ the copy is *masked*, as if it were
irrelevant. Adding irrelevant variables dilutes the draws and damps masking, so for $K > 1$ the
importances depend on them.
""", [("Masking", "/masking?problem=led&copy=X5&flip=0.1")]),
    ("K semantics: id3 versus scikit-learn", r"""
$$
K' = \min(K, |R|)
$$

In Louppe et al. (2013) (id3 semantics), $K$ counts real candidates: $K'$ of the $|R|$
variables not yet used on the branch are drawn. scikit-learn draws features in random order
among all $p$; features constant in the node, including every feature already used on the
branch, count towards $K$ but cannot split, and drawing only goes past $K$ until one
non-constant feature is found. Deep in a tree fewer real candidates compete, so scikit-learn
agrees with id3 at $K = 1$ but does not reproduce Table 2 for $K \ge 2$ (on the LED the two
meet again at $K = p$).
""", [("Masking, scikit-learn semantics", "/masking?problem=led&semantics=sklearn"),
      ("Importances", "/importances?problem=led&method=exact&K=3&semantics=sklearn")]),
)

#: (title, sentences, [(link text, href)]): demo presets, each a full shareable link.
PRESETS = (
    ("Reproduce Louppe Table 2",
     "The LED digits of Louppe et al. (2013): Y is one of ten digits and X1..X7 are its lit "
     "segments. The exact importances of totally randomized trees (K=1) match the Eqn 3 column "
     "of Table 2, and as K grows to 7 the columns move as in the table: X2 and X5 gain, X7 a "
     "little, X1, X3, X4 and X6 lose, and X3 overtakes X4. Every column sums to log2 10 = 3.32 bits. The "
     "Masking page's table puts the paper's values beside ours.",
     [("The table of all K on the Masking page", "/masking?problem=led#table2"),
      ("K = 1 on the Importances page", "/importances?problem=led&method=exact&K=1")]),
    ("XOR: relevance that only conditioning reveals",
     "In XOR, Y is the parity of two fair bits: each bit alone says nothing about Y, together "
     "they determine it. Totally randomized trees credit each bit with 1/2 bit, all of it "
     "from conditional terms I(Xi; Y | B) with B not empty (the degree-0 column is empty), and "
     "the two irrelevant bits get 0. Trees stopped at depth 1, like any one-variable screen, "
     "see nothing; greedy trees (K = 4) reach the same 1/2 bit at lower degrees, because they "
     "pick the partner bit right after the first.",
     [("Decomposition, K = 1 against K = 4", "/decomposition?problem=xor:irrelevant=2&K=4"),
      ("Against depth on the Masking page", "/masking?problem=xor:irrelevant=2&axis=depth")]),
    ("Masking by a noisy copy",
     "X5' is a copy of the LED's X5 that differs from it with probability 0.1, so it carries "
     "almost the same information. At K=1 the two share the credit: X5 keeps 0.509 bits and "
     "X5' gets 0.199 (X5 alone has 0.657). As K grows X5 wins every node where both are drawn "
     "and X5' only splits below X5, where it has nothing left to explain: at K=8 X5 has 0.835 "
     "bits and X5' 0, last in the order. It is masked.",
     [("Noisy copy on the Masking page", "/masking?problem=led&copy=X5&flip=0.1")]),
    ("SYM: individual and conditional relevance",
     "In SYM (Sutera 2013), Y equals X1 when the two fair bits agree and is a fair coin "
     "otherwise. Each bit alone tells I(Xi; Y) = 0.1887 bits about Y, and given the other bit "
     "I(X1; Y | X2) = 0.3113 bits more: together I(X1, X2; Y) = 0.5 bits. A totally randomized "
     "tree tests either bit first with probability 1/2, so each gets (0.1887 + 0.3113) / 2 = "
     "0.25 bits: 0.0944 at degree 0 and 0.1556 at degree 1. Added irrelevant bits get 0 and "
     "leave the 0.25 unchanged (Theorem 5).",
     [("Decomposition, by degree", "/decomposition?problem=sym&K=1"),
      ("With two irrelevant bits on the Masking page", "/masking?problem=sym:irrelevant=2")]),
    ("Irrelevant variables change nothing at K=1",
     "Four independent fair bits are added to the LED. Move the slider from 0 to 6: the K=1 "
     "importances of X1..X7 do not move and the added bits get 0 (Theorems 3 and 5), while for "
     "K>1 the values drift back towards K=1, because irrelevant variables dilute the K draws "
     "and damp masking.",
     [("Irrelevant bits on the Masking page", "/masking?problem=led:irrelevant=4"),
      ("K = 1 on the Importances page",
       "/importances?problem=led:irrelevant=4&method=exact&K=1")]),
    ("Extra-Trees on two continuous variables: the exact value and how fast 10, 100 and "
     "1,000 trees approach it",
     "The gauss problem draws 30 rows of two standard normal inputs, and Y = 1 when "
     "X1 + X2/2 plus noise is positive. scikit-learn's ExtraTrees split at uniform random "
     "thresholds, so every forest gives other importances; without bootstrap they converge to "
     "one value per variable, which varimp computes exactly by following every node the trees "
     "can reach (exact-et, the black diamonds). Fully grown, those exact values add up to the "
     "plug-in I(X; Y) of the 30 rows, as Theorem 2 does for discrete inputs. The card \u201cHow "
     "many trees do I need?\u201d draws the distance from the first T trees to the exact value "
     "for every T up to 1,000: it falls like 1/\u221aT, so 100 trees are about \u221a10 = 3.2 "
     "times closer than 10, and 1,000 another 3.2 times.",
     [("1,000 Extra-Trees against the exact value",
       "/importances?problem=gauss&method=sklearn-et&K=1&trees=1000"),
      ("The exact Extra-Trees value", "/importances?problem=gauss&method=exact-et&K=1")]),
    ("Pruning keeps the first terms",
     "Trees stopped at depth 2 keep only the degree 0 and 1 terms of Eqn 3 (Proposition 6): "
     "the Decomposition page greys the deeper degrees. Against depth, the importances grow "
     "term by term and reach the Eqn 3 values, which sum to I(X; Y), only at full depth.",
     [("Decomposition at depth 2", "/decomposition?problem=led&K=1&depth=2"),
      ("Against depth on the Masking page", "/masking?problem=led&axis=depth")]),
)

#: (title, what it shows in one sentence, preset link): the home page's Teach list, one
#: click each; :data:`PRESETS` tells each at length (every demo there has its link here).
TEACH = (
    ("Table 2 of Louppe et al. (2013)",
     "The LED's exact importances for K = 1..7 beside the paper's columns: X2 and X5 gain, "
     "X7 a little, X1, X3, X4 and X6 lose, and every column sums to log2 10 bits.",
     "/masking?problem=led#table2"),
    ("Masking",
     "The LED by degree at K = 1 and K = 7: greedy trees take the strong variables first and "
     "leave the others little to explain.",
     "/decomposition?problem=led&K=7"),
    ("XOR",
     "Each bit alone says nothing about Y; its 1/2 bit comes only from terms that condition "
     "on the other bit.",
     "/decomposition?problem=xor:irrelevant=2&K=4"),
    ("SYM (Sutera)",
     "Each bit carries 0.1887 bit about Y alone and 0.3113 bit more given the other; totally "
     "randomized trees credit each with their mean, 1/4 bit.",
     "/decomposition?problem=sym&K=1"),
    ("Depth (Proposition 6)",
     "Trees stopped at depth 2 keep only the degree 0 and 1 terms of Eqn 3.",
     "/decomposition?problem=led&K=1&depth=2"),
    ("Irrelevant variables (Theorem 5)",
     "Four added fair bits leave the K = 1 importances unchanged and get 0 themselves.",
     "/masking?problem=led:irrelevant=4"),
    ("Noisy copy",
     "A copy of X5 flipped with probability 0.1 shares X5's credit at K = 1 and is masked "
     "to 0 as K grows.",
     "/masking?problem=led&copy=X5&flip=0.1"),
    ("Extra-Trees, exact",
     "On two continuous inputs, 1,000 Extra-Trees beside the exact value they converge to, "
     "and how far the first 10, 100 and 1,000 trees are from it.",
     "/importances?problem=gauss&method=sklearn-et&K=1&trees=1000"),
    ("Why this row: LED", "What makes a 1 a 1: the top segment, off, carries 1.33 of its log2 10 bits; segments c and f, lit for 8 and 9 digits, little; two added irrelevant bits get 0.", "/explain?problem=led:irrelevant=2&method=exact&row=0"),
    ("Why this row: XOR", "Each bit matters only through the other: at every row both relevant bits get 1/2 bit of local MDI and the irrelevant ones 0.", "/explain?problem=xor:irrelevant=2&method=exact&row=0"),
    ("Why this row: your CSV", "Upload a table (missing values, text categories and identifier columns are handled), choose its target, then open Why this row in the menu: find a customer by their values in its table and see the four explanations of that row.", "/data?source=upload"),
)
