"""A phone and a projector (issue 26): the first figure near the top, figure text of 18 px.

* At 400 x 800 (a phone) every analysis page's controls fold under a "Settings" switch, so
  its first figure starts within the first 700 px of the page (before, 1,200 to 2,000 px of
  controls came first); the switch unfolds them and they work.
* At 1400 x 900 the controls are a column beside the content, as before: no summary.
* In presentation mode at 1024 x 768 every visible text of every figure is at least 18 px
  (the mode's promise; log axes' minor labels, heatmap cells and sweep ticks were 13.5 to 14
  px), and Distributions' tick labels do not touch.
* In presentation mode at 1024 x 768 and 1400 x 900, in states other than the pages' defaults
  (sampled methods, a sample's verdicts, a depth axis, a clicked cell, a pair of variables, a
  sweep...), no figure text is under 18 px, overlaps another or runs out of its figure.
"""

from __future__ import annotations

import pytest
from _browser import open_page, set_number, url_query, visit, wait_for

#: The analysis pages (those with figures beside controls).
ANALYSIS = ("/importances", "/decomposition", "/masking", "/dependence", "/interactions",
            "/measures", "/distributions", "/selection", "/explain", "/stability")
PHONE = (400, 800)
#: Small runs of the slow studies (the layout does not depend on R or T).
LIGHT = {"/distributions": "?R=20&T=10&N=200&sweep=none"}
#: "Within the first screen or so": the issue's 700 px of an 800 px phone screen.
FIRST_FIGURE_BY = 700
MIN_TEXT_PX = 18

# The first figure of the page's content that takes room (a hidden card's takes none).
_FIRST_FIGURE = """
const g = Array.from(document.querySelectorAll('.vi-content .dash-graph'))
  .find(e => e.getBoundingClientRect().height > 0);
if (!g || !g.querySelector('.js-plotly-plot .main-svg')) { return null; }
return g.getBoundingClientRect().top + window.scrollY;
"""
_DRAWN = """
return !document.querySelector('.vi-job-running') && document.readyState === 'complete'
  && document.querySelectorAll('.vi-content .js-plotly-plot .main-svg').length > 0
  && Array.from(document.querySelectorAll('.js-plotly-plot')).every(g => g._fullLayout);
"""
_SHOWN_CONTROLS = """
return Array.from(document.querySelectorAll('.vi-settings-body input, .vi-settings-body button'))
  .filter(e => e.checkVisibility({visibilityProperty: true})).length;
"""
# The element at the middle of the control is the control (nothing hides or covers it).
_ON_TOP = """
const e = arguments[0], r = e.getBoundingClientRect();
const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
return hit === e || (hit && hit.contains(e));
"""
# Every visible text of every figure under MIN_TEXT_PX: [graph id, text, size].
_SMALL_TEXT = """
const out = [];
document.querySelectorAll('.js-plotly-plot').forEach(g => {
  g.querySelectorAll('.main-svg text').forEach(t => {
    const r = t.getBoundingClientRect(), style = getComputedStyle(t);
    if (!r.width || !r.height || !t.textContent.trim() || style.visibility === 'hidden'
        || style.display === 'none' || parseFloat(style.opacity) === 0) { return; }
    const size = parseFloat(style.fontSize);
    if (size < arguments[0]) {
      out.push([(g.closest('.dash-graph') || {}).id, t.textContent.slice(0, 40), size]);
    }
  });
});
return out;
"""
# Pairs of x tick labels of one axis that touch: [graph id, axis layer's index, left, right].
_TOUCHING_TICKS = """
const out = [];
document.querySelectorAll('.js-plotly-plot').forEach(g => {
  g.querySelectorAll('.xaxislayer-above').forEach((layer, n) => {
    const boxes = Array.from(layer.querySelectorAll('.xtick text'))
      .filter(t => t.textContent).map(t => [t.textContent, t.getBoundingClientRect()])
      .filter(b => b[1].width).sort((a, b) => a[1].left - b[1].left);
    for (let i = 1; i < boxes.length; i++) {
      if (boxes[i - 1][1].right > boxes[i][1].left) {
        out.push([(g.closest('.dash-graph') || {}).id, n, boxes[i - 1][0], boxes[i][0]]);
      }
    }
  });
});
return out;
"""


def _window(driver, width: int, height: int) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def _drawn(driver, path: str) -> None:
    wait_for(lambda: driver.execute_script(_DRAWN), 180, f"the figures of {path}")


@pytest.mark.browser
def test_on_a_phone_the_first_figure_comes_before_the_folded_controls(dash_duo, dash_app):
    driver = dash_duo.driver
    _window(driver, *PHONE)
    open_page(dash_duo, dash_app, "/")
    late = {}
    for path in ANALYSIS:
        # Distributions' default run and sweep (100 forests, then a sweep) take minutes on a
        # loaded CI machine; the layout is the same for a small run.
        visit(dash_duo, path + LIGHT.get(path, ""))
        _drawn(driver, path)
        top = wait_for(lambda: driver.execute_script(_FIRST_FIGURE), 30, f"{path}'s figure")
        if top > FIRST_FIGURE_BY:
            late[path] = round(top)
        summary = dash_duo.find_element(".vi-settings-summary")
        assert summary.is_displayed() and summary.text == "Settings", path
        assert not dash_duo.find_element(".vi-settings-toggle").is_selected(), path
        assert driver.execute_script(_SHOWN_CONTROLS) == 0, \
            f"{path}: a control shows in the closed settings"
        summary.click()
        wait_for(lambda: driver.execute_script(_SHOWN_CONTROLS) > 0, 5,
                 f"{path}'s controls after opening the settings")
    assert late == {}, f"first figure lower than {FIRST_FIGURE_BY} px on a phone: {late}"

    # An opened control is used as on a wide screen: the page follows it (its link too).
    visit(dash_duo, "/importances?problem=led")
    _drawn(driver, "/importances")
    dash_duo.find_element(".vi-settings-summary").click()
    wait_for(dash_duo.find_element("#imp-k").is_displayed, 5, "the K box")
    set_number(dash_duo, "#imp-k", 3)
    wait_for(lambda: url_query(dash_duo).get("K") == "3", 30, "K = 3 in the link")
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_on_a_wide_screen_the_controls_stay_a_column_beside_the_figures(dash_duo, dash_app):
    driver = dash_duo.driver
    _window(driver, 1400, 900)
    open_page(dash_duo, dash_app, "/")
    for path in ("/importances", "/dependence", "/measures"):
        visit(dash_duo, path)
        _drawn(driver, path)
        assert not dash_duo.find_element(".vi-settings-summary").is_displayed(), path
        aside = dash_duo.find_element(".vi-controls")
        content = dash_duo.find_element(".vi-content")
        assert driver.execute_script(_SHOWN_CONTROLS) > 0, f"{path}: no control shows"
        first = next(e for e in dash_duo.find_elements(".vi-settings-body input")
                     if e.is_displayed())
        assert driver.execute_script(_ON_TOP, first), f"{path}: the first control is covered"
        # beside: the column left of the content, both starting on the same line
        assert aside.rect["x"] + aside.rect["width"] <= content.rect["x"], path
        assert abs(aside.rect["y"] - content.rect["y"]) < 2, path
        assert first.rect["y"] < 900, f"{path}: the first control is below the first screen"


@pytest.mark.browser
def test_presentation_mode_draws_every_figure_text_at_18_px(dash_duo, dash_app):
    driver = dash_duo.driver
    _window(driver, 1024, 768)
    open_page(dash_duo, dash_app, "/")
    small = {}
    for path in ANALYSIS:
        visit(dash_duo, path + "?present=1")
        _drawn(driver, path)
        found = []

        def large():
            found[:] = driver.execute_script(_SMALL_TEXT, MIN_TEXT_PX)
            return not found
        try:
            wait_for(large, 30, f"18 px figure text on {path}")
        except AssertionError:
            small[path] = found[:12] + ([f"... {len(found)} in all"] if len(found) > 12 else [])
    assert small == {}, f"figure text under {MIN_TEXT_PX} px in presentation mode: {small}"

    # Distributions' small histograms: at 18 px their tick labels ran into each other.
    visit(dash_duo, "/distributions?present=1")
    _drawn(driver, "/distributions")
    touching = []

    def apart():
        touching[:] = driver.execute_script(_TOUCHING_TICKS)
        return not touching
    try:
        wait_for(apart, 30, "Distributions' tick labels apart")
    except AssertionError:
        raise AssertionError(f"tick labels that touch on Distributions: {touching}") from None


# Cell values of a heatmap that overlap another: [count of values, overlapping pairs].
_CELL_OVERLAPS = """
const g = document.querySelector(arguments[0] + ' .js-plotly-plot');
if (!g) { return [0, 0]; }  // not drawn yet
const bs = Array.from(g.querySelectorAll('.heatmaplayer text'))
  .filter(t => t.textContent.trim()).map(t => t.getBoundingClientRect());
let pairs = 0;
for (let i = 0; i < bs.length; i++) { for (let j = i + 1; j < bs.length; j++) {
  const a = bs[i], b = bs[j];
  if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) { pairs++; }
} }
return [bs.length, pairs];
"""


@pytest.mark.browser
@pytest.mark.parametrize("path, graph, box, cells", [
    ("/masking?problem=led", "#masking-delta", "#masking-delta-scroll", 49),
    ("/decomposition?problem=led", "#decomp-graph", "#decomp-graph-scroll", 98)])
def test_on_a_phone_heatmap_values_do_not_overlap(dash_duo, dash_app, path, graph, box, cells):
    """At 400 px a heatmap keeps cells wide enough for their values (Masking's change from
    K = 1 and Decomposition's pair, 7 columns each on the LED) and scrolls sideways in its
    own box; the page itself does not scroll sideways.  Before, Masking's 7 columns were
    about 20 px wide and their signed values ran into each other."""
    driver = dash_duo.driver
    _window(driver, *PHONE)
    open_page(dash_duo, dash_app, path)
    _drawn(driver, path)
    counted, overlapping = wait_for(lambda: (lambda r: r if r[0] >= cells else None)(
        driver.execute_script(_CELL_OVERLAPS, graph)), 60, f"the values of {graph}")
    assert counted == cells and overlapping == 0, (counted, overlapping)
    assert driver.execute_script(
        "const b = document.querySelector(arguments[0]); return b.scrollWidth > b.clientWidth;",
        box)
    assert driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth;")
    assert dash_duo.get_logs() == []


#: States other than the pages' defaults, each a link (issue 26: "every page, not only the
#: default state"); small runs of the slow studies.
STATES = (
    "/importances?problem=led&method=sklearn-et&trees=50",
    "/importances?problem=led&method=forest",
    "/importances?problem=led&sampling=sample&n=300",
    "/masking?problem=led&axis=depth",
    "/decomposition?problem=sym&K=2&var=X1&degree=1",
    "/dependence?problem=led&feature=X2&feature2=X5",
    "/measures?problem=led&kind=et",
    "/distributions?problem=xor:irrelevant=2&R=20&T=10&N=200&view=violin&sweep=n_samples"
    "&values=50,200",
    "/interactions?problem=xor",
    "/stability?problem=led&K=3",
    "/explain?problem=led&row=5",
    "/selection?problem=led&R=20&trees=20&show=rs",
)
# Each figure's texts under 18 px, pairs that overlap (two turned labels, as Plotly turns a
# crowded category axis's, are not compared: their boxes are not their glyphs) and texts
# out of their figure's box: {small: [...], over: [...], clipped: [...]}.
_TEXT_PROBLEMS = """
const small = [], over = [], clipped = [];
document.querySelectorAll('.js-plotly-plot').forEach(g => {
  const id = (g.closest('.dash-graph') || {}).id, box = g.getBoundingClientRect();
  const ts = Array.from(g.querySelectorAll('.main-svg text')).filter(t => {
    const r = t.getBoundingClientRect(), st = getComputedStyle(t);
    return r.width && r.height && t.textContent.trim() && st.visibility !== 'hidden'
      && st.display !== 'none' && parseFloat(st.opacity) !== 0;
  });
  const rs = ts.map(t => t.getBoundingClientRect());
  const turned = ts.map(t => /rotate\\((?!0[,)])/.test(t.getAttribute('transform') || ''));
  ts.forEach((t, i) => {
    const size = parseFloat(getComputedStyle(t).fontSize), r = rs[i];
    if (size < arguments[0]) { small.push([id, t.textContent.slice(0, 30), size]); }
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
        || r.bottom > box.bottom + 1) { clipped.push([id, t.textContent.slice(0, 30)]); }
  });
  for (let i = 0; i < rs.length; i++) { for (let j = i + 1; j < rs.length; j++) {
    if (turned[i] && turned[j]) { continue; }
    const a = rs[i], b = rs[j];
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 2 && h > 2) {
      over.push([id, ts[i].textContent.slice(0, 25), ts[j].textContent.slice(0, 25)]);
    }
  } }
});
return (small.length || over.length || clipped.length)
  ? {small: small.slice(0, 6), over: over.slice(0, 6), clipped: clipped.slice(0, 6)} : null;
"""


@pytest.mark.browser
@pytest.mark.parametrize("width, height", [(1024, 768), (1400, 900)])
def test_presentation_mode_in_other_states_keeps_text_large_apart_and_inside(
        dash_duo, dash_app, width, height):
    """Issue 26's projector check beyond the default states.  Found and fixed with it: the
    convergence figure's 18 px legend left its log axis 60 px (labels on top of each other),
    Dependence's ten class panels were squeezed from 1,200 to 400 px, Measures' legend
    covered "Variable", the Importances badge covered the legend, Masking's change values
    overlapped at half width, a long subtitle ran out of its figure."""
    driver = dash_duo.driver
    _window(driver, width, height)
    open_page(dash_duo, dash_app, "/")
    states = STATES + (tuple(p + LIGHT.get(p, "") for p in ANALYSIS) if width > 1024 else ())
    found = {}
    for path in states:
        visit(dash_duo, path + ("&" if "?" in path else "?") + "present=1")
        _drawn(driver, path)
        problems = []

        def clean():
            problems[:] = [driver.execute_script(_TEXT_PROBLEMS, MIN_TEXT_PX)]
            return problems[0] is None
        try:
            wait_for(clean, 30, f"clean figure text on {path}")
        except AssertionError:
            found[path] = problems[0]
    known = {k: v for k, v in found.items() if (width, k) in NOT_YET}
    assert found == known, f"presentation mode at {width} x {height}: {found}"


#: Overlaps seen and not yet fixed: none.  Fixed: Distributions' panel titles over the tick
#: labels of the panel above (subplot titles taken for badges and lifted over the legend);
#: Masking's change values by depth at 1400 px, in some runs (its figures were drawn before
#: presentation mode folded the controls, 300 px too narrow, and kept that width).
NOT_YET: set = set()
