"""page_scan.js in a real Chromium: what a page says more than once, or says only to scroll, is said once or as text."""

from __future__ import annotations

import functools
import http.server
import re
import threading

import pytest

from tests.tools.web.test_session import NEEDS_CHROMIUM, _context, _Quiet, scan

pytestmark = NEEDS_CHROMIUM

EXCERPT = "EXCERPT: cloves go in a hand's depth apart, pointed end up, before the ground freezes."
BLOG = f"""<!doctype html><html><head><meta charset="utf-8"><title>Notes from the allotment</title></head><body>
<header><nav><a href="/">Home</a> <a href="/archive">Archive</a> <a href="/about">About</a></nav></header>
<main><article>
  <h1>Winter beans</h1>
  <p>Broad beans sown in November come through the frost<sup id="r1"><a href="#n1">[1]</a></sup> and crop a month
     before the spring sowings do.<sup id="r2"><a href="#n2">2</a></sup> The <a href="/guide">sowing guide</a>
     gives the depths; the <a href="/guide">sowing guide</a> also covers peas, which want the same soil but a later
     date.</p>
  <p>Pinch out the tops once the first pods set: the plant puts its strength into the pods, and the blackfly that
     gathers on the soft tips has nothing left to feed on. The tops are good to eat, steamed like spinach.</p>
  <h2 id="notes">Notes <a href="#notes">¶</a></h2>
  <ol><li id="n1"><a href="#r1">^</a> Down to about ten degrees below zero, in a well-drained bed.</li>
    <li id="n2"><a href="#r2">2</a>Sown in pots, they go out at four leaves.</li></ol>
  <p>Read next:</p>
  <a href="/p/runner"><img src="data:," alt="Runner beans" width="40" height="40"></a>
  <a href="/p/runner"><div><h3>Runner beans</h3><p>Runner beans want a trench of compost dug in the autumn and a frame
    of canes tied at the top before the first shoots climb.</p></div></a>
</article></main>
<aside class="sidebar"><h2>Popular posts</h2>
  {"".join(f'<a href="/p/{n}"><div><img src="data:," alt=""><h3>{title}</h3><p>{EXCERPT}</p></div></a>'
           for n, title in enumerate(["Planting garlic", "Saving seed", "Leaf mould"]))}
</aside>
<footer><a href="/">Home</a> <a href="/archive">Archive</a> <a href="/about">About</a>
  <a href="/contact">Contact</a></footer>
</body></html>"""


@pytest.fixture(scope="module")
def blog(tmp_path_factory):
    """The page served on 127.0.0.1, and the context of a run whose task names it."""
    folder = tmp_path_factory.mktemp("blog")
    (folder / "index.html").write_text(BLOG, encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    ctx = _context(tmp_path_factory.mktemp("home"), f"Read the blog at {url}", browser_profile=False)
    yield ctx, url
    ctx.close()
    server.shutdown()


def test_boilerplate_and_links_that_only_scroll_are_said_once_or_as_text(blog):
    ctx, url = blog
    out = scan(ctx, url=url)
    # a sidebar of cards: each card a link named by its heading, not its excerpt
    assert re.search(r"\[Planting garlic\]#\d+", out) and re.search(r"\[Leaf mould\]#\d+", out), out
    assert "EXCERPT" not in out
    # a footnote mark reads as text, its back-link and a heading's anchor (they only scroll) not at all
    assert "come through the frost [1] and crop" in out and "[[1]]#" not in out
    assert "[^]#" not in out and "¶" not in out and "Down to about ten degrees below zero" in out
    assert "sowings do. 2 The" in out and "2 Sown in pots" in out  # a mark stays apart from the word after it
    # a second link to the same place under the same name reads as text: the first ref serves
    assert len(re.findall(r"\[sowing guide\]#\d+", out)) == 1 and "the sowing guide also covers peas" in out
    # a card straight after its picture's link under the same name keeps its text, not a second name
    assert len(re.findall(r"\[Runner beans\]#\d+", out)) == 1 and "a trench of compost" in out
    # a footer repeating the header's links says only what is new, and does not count the rest as hidden
    assert len(re.findall(r"\[Home\]#\d+", out)) == 1 and re.search(r"\[Contact\]#\d+", out)
    assert "more links/controls" not in out
