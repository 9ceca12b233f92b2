"""Studies that repeat a computation many times: Monte Carlo replicates and sweeps
(``montecarlo``, ``montecarlo_jobs``, ``replicates``), permutation nulls and plug-in bias
(``nulls``), fitted laws of the importances (``fits``), all three in one study
(``distributions``), Li et al.'s noisy-feature protocol (``noisy_protocol``), random-subspace
selection RS/SRS and its comparison over seeds (``selection``, ``subspace``, ``rs_srs``) and
masking along K and depth (``masking``, ``masking_tables``, ``masking_copy``) and what a
masking study says: Table 2 beside the paper's values, its sentences (``masking_report``);
how far a forest of T trees is from the exact value it converges to (``convergence``)."""
