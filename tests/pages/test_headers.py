"""Every analysis page names the dataset it shows in its header (``{prefix}-dataset``).

The expected names are written from the problems' definitions: LED has 7 segments
(Louppe et al. 2013), XOR 2 relevant bits plus the irrelevant ones asked for, and a
noisy copy is one more input; a sample says its N, an exact distribution says "exact".
"""

from __future__ import annotations

import importlib

import pytest

LED_SAMPLE = {"problem": "led", "sampling": "sample", "n": "300"}


def _header(layout, prefix: str) -> str:
    """The text of the header's data name, found anywhere in the page's layout."""
    stack = [layout]
    while stack:
        c = stack.pop()
        if getattr(c, "id", None) == f"{prefix}-dataset":
            return c.children
        kids = getattr(c, "children", None)
        stack.extend(kids if isinstance(kids, (list, tuple)) else [kids] if kids else [])
    raise AssertionError(f"no {prefix}-dataset in the page")


@pytest.mark.parametrize("name, query, label", [
    ("data", LED_SAMPLE, "led (N = 300, 7 inputs)"),
    ("importances", LED_SAMPLE, "led (N = 300, 7 inputs)"),
    ("decomposition", LED_SAMPLE, "led (N = 300, 7 inputs)"),
    ("measures", LED_SAMPLE, "led (N = 300, 7 inputs)"),
    ("distributions", LED_SAMPLE, "led (N = 300, 7 inputs)"),
    ("selection", LED_SAMPLE, "led (N = 300, 7 inputs)"),
    ("dependence", LED_SAMPLE, "led (N = 300, 7 inputs)"),
    ("interactions", LED_SAMPLE, "led (N = 300, 7 inputs)"),
    ("importances", {"problem": "xor:irrelevant=2"}, "xor:irrelevant=2 (exact, 4 inputs)"),
    # Masking builds its own exact table from the problem: never a sample
    ("masking", LED_SAMPLE, "led (exact, 7 inputs)"),
    ("masking", {"problem": "xor:irrelevant=2", "copy": "X1"},
     "xor:irrelevant=2 (exact, 5 inputs, X1' a noisy copy)"),
    ("data", {"source": "upload"}, "no table yet"),
])
def test_every_page_names_its_data(app_module, name, query, label):
    page = importlib.import_module(f"pages.{name}")
    assert _header(page.layout(**query), page.PREFIX) == label


def test_the_masking_header_follows_its_controls(app_module):
    import pages.masking as page

    out = page.fit_controls("xor", 1, "none", "K", 1, "full")
    assert out[-1] == "xor:irrelevant=1 (exact, 3 inputs)"
