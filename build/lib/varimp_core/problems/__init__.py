"""The built-in problems of the papers (LED, XOR, SYM, Madelon, Strobl, bundled real data sets):
the registry and spec parser (``registry``), their ``key=value`` options (``options``), the
exactly known discrete ones (``discrete``), the sampled ones (``sampled``) and the table of
definitions (``specs``)."""
