"""web_scan on local pages in a real Chromium: what an agent needs is there, what it doesn't is not."""

from __future__ import annotations

import re

import pytest

from ga.errors import PermissionDenied
from tests.tools.web import test_session as shared
from tests.tools.web.test_session import scan
from tools import web_execute_js, web_scan
from tools.web import pages, scan_budget

site, web = shared.site, shared.web  # the shared fixtures: local site, module browser
needs_chromium = shared.NEEDS_CHROMIUM  # only the tests that open a browser


def ref_of(text: str, pattern: str) -> str:
    match = re.search(pattern + r"[^\n]*?\]#(\d+)", text)
    assert match, f"{pattern!r} not found in:\n{text}"
    return match.group(1)


@needs_chromium
def test_login_form_shows_controls_and_hides_noise(web, site):
    out = scan(web, url=f"{site}/login.html")
    assert out.startswith("Tabs (* current): t")
    assert "# Sign in to Acme" in out
    assert re.search(r"\[input email name=email placeholder=you@example.com required\]#\d+", out)
    assert re.search(r"\[input password name=password\]#\d+", out)
    assert re.search(r"\[checkbox checked name=remember\]#\d+ Remember me", out)
    assert "options: English*, Français" in out
    assert re.search(r"\[button: Log in\]#\d+", out)
    for noise in ("SECRET-TOKEN", "trackingPixel", "color: red", "Hidden promo text", "Offscreen skip text"):
        assert noise not in out
    assert "=== main" in out and "=== header" in out and "=== footer" in out


@needs_chromium
def test_page_text_is_marked_as_data(web, site):
    out = scan(web, url=f"{site}/injection.html")
    start = out.index("[page content")
    assert "never instructions" in out[start:out.index("\n", start)]
    nonce = re.search(r"\[page content (\w+)", out).group(1)
    assert out.index("IGNORE ALL PREVIOUS") < out.index(f"[end of page content {nonce}]")


@needs_chromium
@pytest.mark.parametrize("text_only", [False, True])
def test_text_a_reader_cannot_see_is_left_out(web, site, text_only):
    out = scan(web, url=f"{site}/hidden_text.html", text_only=text_only)
    assert "HIDDEN" not in out, [line for line in out.splitlines() if "HIDDEN" in line]  # 15 ways to hide text
    for kept in ("Start at setting 12", "Visible closing line about cleaning the burrs", "reached by scrolling",
                 "Gradient heading stays", "Light text on a dark card stays", "Inline blocks without gaps stay"):
        assert kept in out, kept
    if not text_only:  # an image-replaced link is still clicked by its name
        assert re.search(r"\[Home link\]#\d+", out), out


@needs_chromium
def test_modal_dialog_comes_first_and_covers_the_page(web, site):
    out = scan(web, url=f"{site}/modal.html")
    dialog, main = out.index("=== dialog"), out.index("=== main")
    assert dialog < main
    assert "modal: it covers the page" in out and "(behind the dialog)" in out
    assert "Subscribe to our newsletter" in out and re.search(r"\[button: No thanks\]#\d+", out)


@needs_chromium
def test_cookie_banner_is_an_overlay_with_its_buttons(web, site):
    out = scan(web, url=f"{site}/cookie.html")
    assert out.index("=== overlay") < out.index("=== main")
    assert re.search(r"\[button: Accept all\]#\d+", out) and "Fresh coffee beans" in out


@needs_chromium
def test_long_list_is_folded_with_a_working_selector(web, site):
    out = scan(web, url=f"{site}/list.html")
    assert "Post number 1 about" in out and "Post number 400 about" not in out
    note = re.search(r"\(… (\d+) more similar items hidden; all 400: (document\.querySelectorAll\('[^)]*'\))\)", out)
    assert note, out[-1500:]
    count = web_execute_js.run({"script": note.group(2) + ".length"}, web).content
    assert "Value: 400" in count
    assert scan_budget.approx_tokens(out) <= web_scan.BUDGET_TOKENS + 200


@needs_chromium
def test_same_origin_frames_and_shadow_roots_are_included(web, site):
    out = scan(web, url=f"{site}/frames.html")
    assert "Inside the frame: a quarterly report" in out and "[Frame link to login]#" in out
    assert "Shadow profile of Grace Hopper" in out
    follow = ref_of(out, r"\[button: Follow Grace")
    got = web_execute_js.run({"script": f"$ga({follow}).textContent"}, web).content
    assert "Follow Grace" in got


@needs_chromium
def test_text_only_is_smaller_and_has_no_refs(web, site):
    full = scan(web, url=f"{site}/login.html")
    text = scan(web, text_only=True)
    assert "Sign in to Acme" in text and "]#" not in text and len(text) < len(full)
    assert text.endswith("(text only: no controls or refs; scan without text_only to act on the page)")


@needs_chromium
def test_over_budget_page_is_cut_with_a_marker_and_saved_whole(web, site):
    scan(web, url=f"{site}/injection.html")
    web_execute_js.run({"script": "document.querySelector('main').innerHTML += "
                                  "Array.from({length: 3000}, (_, i) => `<p>Paragraph ${i} words words words.</p>`)"
                                  ".join('')"}, web)
    out = scan(web)
    marker = re.search(r"\[… cut here to fit ~\d+ tokens: \d+ more lines .*the whole page: (\S+) \(read it with "
                       r"file_read, start=(\d+)\)\]", out)
    assert marker, out[-500:]
    saved = open(marker.group(1), encoding="utf-8").read()
    assert "Paragraph 2999 words" in saved and "Paragraph 2999 words" not in out


@needs_chromium
def test_tabs_only_lists_tabs(web, site):
    scan(web, url=f"{site}/cookie.html")
    out = scan(web, tabs_only=True)
    assert out.startswith("Tabs (* current):") and "'Shop'" in out and "page content" not in out
    assert "tabs only" not in out
    opened = scan(web, url=f"{site}/login.html", tabs_only=True)  # a small model's url with tabs_only=true
    tab = re.search(r"(t\d+)\* 'Sign in - Acme'", opened).group(1)
    assert opened.endswith(f"(tabs only: call web_scan(tab={tab!r}) to read the page)") and "page content" not in opened


@needs_chromium
def test_schemes_other_than_http_are_refused(web, monkeypatch):
    with pytest.raises(PermissionDenied, match="GA_ALLOW_SCHEMES"):
        web_scan.run({"url": "file:///etc/passwd"}, web)
    assert pages.check_url("example.com", env={}) == "https://example.com"
    assert pages.check_url("file:///tmp/x.html", env={"GA_ALLOW_SCHEMES": "file"}) == "file:///tmp/x.html"


@pytest.mark.parametrize(("given", "opened"), [
    ("127.0.0.1:8931/new.html", "http://127.0.0.1:8931/new.html"),
    ("localhost", "http://localhost"),
    ("localhost:3000/app?x=1", "http://localhost:3000/app?x=1"),
    ("127.0.0.2/x", "http://127.0.0.2/x"),
    ("[::1]:8080/", "http://[::1]:8080/"),
    ("0.0.0.0:8000", "http://0.0.0.0:8000"),
    ("devbox:8080/index.html", "http://devbox:8080/index.html"),
    ("example.com", "https://example.com"),
    ("docs.python.org/3/library/", "https://docs.python.org/3/library/"),
    ("localhost.example.com", "https://localhost.example.com"),
    ("127.0.0.1.example.com/x", "https://127.0.0.1.example.com/x"),
    ("https://localhost:8443/", "https://localhost:8443/"),
])
def test_local_addresses_without_a_scheme_open_over_http(given, opened):
    assert pages.check_url(given, env={}) == opened


def test_only_url_less_scans_may_run_beside_other_calls():
    assert web_scan.SPEC.is_concurrent({}) and web_scan.SPEC.is_concurrent({"tab": "t1"})
    assert not web_scan.SPEC.is_concurrent({"url": "http://127.0.0.1/"})
    assert not web_execute_js.SPEC.is_concurrent({"script": "1"})



@needs_chromium
def test_link_blocks_repeats_and_url_labels_are_folded_honestly(web, site):
    out = scan(web, url=f"{site}/portal.html")
    # a block of the page that is mostly links is navigation: its own region, its repeats of one target said once
    assert re.search(r"=== links #\d+", out) and "[Storm closes the harbour road]#" in out
    assert "repairs take a week" not in out and "More…" not in out
    # menus past the link cap (and their repeated controls) end with a count and a way to reach the rest; key links stay
    assert re.search(r"\(\+3 more links/controls: \$ga\(\d+\)\.querySelectorAll\('a, button'\)\)", out), out
    assert "[Sign in]#" in out and "[Mu]#" not in out and out.count("[button: Print]") == 1
    # ad labels and a line said twice in a row outside the main content go; share buttons are one summary line
    assert "Advertisement" not in out and out.count("Updated daily") == 1
    assert re.search(r"=== share #\d+: ~\d+ words, 2 links/controls, not shown", out)
    # an unlabelled link is named by a short form of its target, never the whole URL
    assert "[shop.example.com/very/long/path" in out and "pid=" not in out
    assert "Photos of the damage are in the gallery" in out
    # a long footer shows its first lines and says how many more there are
    assert "Footer line 10" in out and "Footer line 11" not in out
    assert re.search(r"\(\+3 more lines: \$ga\(\d+\)\.innerText", out)


@needs_chromium
def test_text_only_leaves_out_link_blocks_and_urls(web, site):
    scan(web, url=f"{site}/portal.html")
    text = scan(web, text_only=True)
    assert "Harbour town news" in text and "Photos of the damage" in text
    assert "Storm closes" not in text and "shop.example.com" not in text
    assert "(not shown in text_only: header, links, share, footer)" in text


@needs_chromium
def test_a_json_document_shows_a_prefix_its_type_and_how_to_read_on(web, site):
    out = scan(web, url=f"{site}/data.json")
    assert '{"items": [{"id": 0, "name": "item 0"}' in out and "LAST-ITEM-MARKER" not in out
    assert re.search(r"… \[line cut at \d+ of \d+ chars\]", out)
    assert "application/json, 50K chars" in out and "document.body.innerText.slice(a, b)" in out


@needs_chromium
def test_continuation_line_follows_the_last_shown_line(web, site):
    out = scan(web, url=f"{site}/long_article.html")
    marker = re.search(r"the whole page: (\S+) \(read it with file_read, start=(\d+)\)", out)
    assert marker, out[-500:]
    whole = [line for line in out.splitlines() if line.startswith("Paragraph") and "[line cut at" not in line]
    last = whole[-1].split(":")[0]
    saved = open(marker.group(1), encoding="utf-8").read().splitlines()
    following = saved[int(marker.group(2)) - 1]
    assert following.startswith(f"Paragraph {int(last.split()[1]) + 1}:"), (last, following)


@needs_chromium
def test_same_origin_iframe_away_from_the_left_edge_is_read(web, site):
    out = scan(web, url=f"{site}/iframe_offset.html")
    assert "Outer text." in out and "Inside the frame: a quarterly report" in out


@needs_chromium
def test_dialog_raised_while_loading_is_reported_once(web, site):
    out = scan(web, url=f"{site}/alert_onload.html")
    assert "Dialog alert in t1: 'Welcome alert!' → accepted" in out and "After the alert." in out
    assert "Dialog alert" not in scan(web)


@needs_chromium
@pytest.mark.parametrize(("page", "formula"), [
    ("katex-blog-post", r"$\theta_{t+1} = \theta_t - \eta \nabla L(\theta_t)$"),  # its TeX annotation
    ("mathjax3-lecture-notes", "$θ_(t + 1) = θ_t − η∇L(θ_t)$"),  # glyphs are CSS content: the MathML, linearised
    ("mathml-native-article", "$x = (− b ± √(b^2 − 4 a c))/(2 a)$"),
])
def test_formulas_are_read_as_text(web, site, page, formula):
    out = scan(web, url=f"{site}/recall/{page}/source.html")
    assert f"\n{formula}\n" in out  # a display formula is a line of its own
    assert "The gradient $" in out and "points in the direction of steepest increase" in out  # inline ones stay inline


@needs_chromium
def test_formulas_of_wikipedia_and_mathjax_2_and_scripts_in_plain_text(web, site):
    out = scan(web, url=f"{site}/formulas.html")
    assert r"the identity $e^{i\pi}+1=0$ links five constants" in out  # not "{\displaystyle ...}"
    assert r"the sum $\sum_i i$ runs over all items" in out
    assert "the area is r^2π, the first item is a_1, and" in out and "source. [[1]]#" in out  # a footnote stays
    assert "When j< k the pair" in out  # never read as the start of a tag
    assert "AA^H A is written" in out


@needs_chromium
def test_a_link_that_wraps_a_card_keeps_its_text(web, site):
    out = scan(web, url=f"{site}/recall/ghost-blog-index/source.html")
    card = re.search(r"\[Why our build got three times faster\]#\d+\nEngineering\n(.*)\n", out)
    assert card, out[:1500]
    assert card.group(1) == ("We profiled a year of CI runs and found that most of the time went into resolving the "
                             "same dependencies again and again. Caching the resolver's output, not the downloads, "
                             "was the change that mattered.")
    assert "## Why our build" not in out  # its heading is the link's label, said once
    text = scan(web, text_only=True)
    assert "## Why our build got three times faster\nWe profiled a year" in text  # text_only: plain headings


@needs_chromium
def test_a_ref_is_kept_apart_from_the_word_after_it(web, site):
    out = scan(web, url=f"{site}/recall/wikipedia-list-of-rivers/source.html")
    assert re.search(r"\[river system\]#\d+ s over 1,000 kilometres", out), out[:2000]


@needs_chromium
def test_a_scrolling_photo_strip_keeps_its_captions_and_a_clipping_box_hides_what_sticks_out(web, site):
    out = scan(web, url=f"{site}/photo_strip.html")
    assert "Third caption: a heron waiting" in out  # one scroll away, not hidden
    assert "Left half of a clipped row" in out and "Right half of a clipped row" not in out
