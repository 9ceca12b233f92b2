"""The page framework: parameters, the job view, the page frame, the data choice, shared
controls, URL state and the study families two pages share.

Pages import it; it imports :mod:`pages._server` and :mod:`varimp_core`, never a page.  The
leading underscore keeps Dash from loading this folder as pages; the modules import without a
Dash app so tests can call their functions directly.
"""
