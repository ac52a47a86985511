"""page_scan.js in a real Chromium: what a page says more than once, or says only to scroll, is said once or as text."""

from __future__ import annotations

import functools
import http.server
import re
import threading

import pytest

from tests.tools.web.test_session import NEEDS_CHROMIUM, _context, _Quiet, scan
from tools import web_execute_js

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


SHARED = "u=https%3A%2F%2Fgazette.example%2Fferry"
NEWS = f"""<!doctype html><html><head><meta charset="utf-8"><title>Harbour Gazette</title></head><body>
<header><a href="#story">Skip to the story</a>
  <nav><ul><li><a href="/">Front page</a></li><li>|</li><li><a href="/local">Local</a></li><li>|</li>
    <li><a href="/privacy">Privacy Policy</a></li></ul> <a href="/sport">Sport</a> |</nav>
  <form action="/search"><input name="q" placeholder="Search" aria-label="Search"><button>Go</button></form>
</header>
<nav class="toc"><a href="#fares">Fares</a> <a href="#timetable">Timetable</a></nav>
<div class="byline"><a href="/author/ann">Ann Lee</a>, harbour reporter</div>
<main id="story"><article>
  <h1>The ferry returns</h1>
  <p>The ferry to the islands sails again from Monday, after a winter in the dry dock at the yard by the river
     mouth, where its hull was scraped and painted and its engines were taken apart and rebuilt by hand.</p>
  <h2 id="fares">Fares</h2>
  <p>A return ticket costs the same as last year; children under twelve and bicycles travel free, and a book
     of ten tickets for islanders is sold at the harbour office from eight in the morning.</p>
  <h2 id="timetable">Timetable</h2>
  <p>Four crossings a day until May, then six through the summer, the first at seven and the last at nine, with
     an extra night crossing on Fridays and Saturdays when the weather allows it.</p>
</article></main>
<div class="author-bio"><a href="/author/ann">Ann Lee</a> has covered the harbour since 2009.</div>
<aside><h3>Share this story</h3><h6>Copied!</h6>
  <a href="https://www.facebook.com/sharer/sharer.php?{SHARED}">Share on Facebook</a>
  <a href="https://twitter.com/intent/tweet?{SHARED}">Share on Twitter</a>
  <a href="mailto:?subject=The%20ferry%20returns">Email this story</a>
  <h3>Newsletter</h3><p>Harbour news every Friday.</p>
  <a href="/newsletter"><picture><noscript><img src="data:," alt="card"></noscript>
    <img src="data:," alt="A paper boat on the harbour" width="60" height="40"></picture></a>
</aside>
<div class="share-bar"><p>Share</p></div>
<div class="sidebar"><h3>Elsewhere</h3><p>{"".join(f'<a href="/p/{n}">Story {n}</a> ' for n in range(1, 8))}</p>
  <p>More soon.</p></div>
<footer><p><a href="/about">About us</a> <a href="/contact">Contact</a> <a href="/jobs">Jobs</a>
  <a href="/privacy">Privacy policy</a> <a href="/terms">Terms</a> <a href="/rss">RSS</a>
  <a href="/archive">Archive</a></p>
  <p>© 2024 Harbour Gazette Ltd. All rights reserved. Use of this site means you accept our
     <a href="/terms-of-use">terms of use</a> (updated 1/1/24).</p>
  <p>The material on this site may not be reproduced without permission.</p></footer>
</body></html>"""


SOURCES = ["Field notes on garlic", "Saving onion seed", "The leaf mould year", "Cloves and frost"]
NOTES = f"""<!doctype html><html><head><meta charset="utf-8"><title>Garlic</title></head><body>
<header><ul><li><a href="/">Home</a></li><li><a href="/archive">Archive</a></li><li><a href="/about">About</a></li></ul>
  <form action="/find"><input name="search" placeholder="Search"></form></header>
<main><article><h1>Garlic in a cold bed</h1>
  <p>Garlic wants a cold spell to split into cloves{"".join(f'<sup id="r{i}"><a href="#n{i}">[{i}]</a></sup>'
     for i in range(1, 5))}, which is why it goes in before winter; the <a href="/p/beds">raised beds</a> drain
     best.</p>
  <h2>References</h2>
  <ol>{"".join(f'<li id="n{i}"><a href="#r{i}">^</a> <a href="https://source{i}.example/a">{t}</a>, Allotment '
               'Monthly.</li>' for i, t in enumerate(SOURCES, 1))}</ol>
</article></main>
<footer><a href="/contact">Contact</a> <a href="https://platform.example/">Powered by Platform</a></footer>
</body></html>"""


@pytest.fixture(scope="module")
def blog(tmp_path_factory):
    """The page served on 127.0.0.1, and the context of a run whose task names it."""
    folder = tmp_path_factory.mktemp("blog")
    (folder / "index.html").write_text(BLOG, encoding="utf-8")
    (folder / "news.html").write_text(NEWS, encoding="utf-8")
    (folder / "notes.html").write_text(NOTES, encoding="utf-8")
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


def test_boilerplate_says_what_an_agent_acts_on_once_and_no_more(blog):
    ctx, url = blog
    out = scan(ctx, url=url + "news.html")
    # links that only scroll (a skip link, the contents beside the text) are left out of boilerplate
    assert "Skip to the story" not in out and "[Fares]#" not in out and "## Fares" in out, out
    # a menu's separators go with the items they stood between; a label that repeats the placeholder is said once
    assert "- |" not in out and not any(line.endswith("|") for line in out.splitlines())
    assert re.search(r"\[input name=q placeholder=Search\]#\d+", out) and "label=" not in out
    # outside the content a second link to the same place under the same name reads as text
    assert len(re.findall(r"\[Ann Lee\]#\d+", out)) == 1 and "Ann Lee has covered the harbour" in out
    # links that post the page to another site are counted, not shown; so are headings left with nothing under them
    assert "Share on" not in out and "Email this story" not in out and "Share this story" not in out
    assert "Copied!" not in out and "### Newsletter" in out
    assert re.search(r"\(\+3 more links/controls: \$ga\(\d+\)\.querySelectorAll\('a, button'\)\)", out), out
    # a picture's noscript fallback is no name: the picture's own alt text is
    assert re.search(r"\[A paper boat on the harbour\]#\d+", out) and "img" not in out
    # a share bar with nothing to click is not even a summary line
    assert "=== share" not in out
    # a footer is cut at its link cap: what follows (links and legal text) is counted, and the note says how to
    # read lines but not again how to list links; a link said in the header under another case is said once
    assert "All rights reserved" not in out and "may not be reproduced" not in out
    assert re.search(r"\(\+2 more lines, 2 more links/controls: \$ga\(\d+\)\.innerText\)", out), out
    assert out.lower().count("[privacy policy]") == 1
    # past its cap a sidebar's short last words cost less than counting them would
    assert "[Story 6]#" in out and "More soon." in out and re.search(r"\(\+1 more links/controls: \$ga\(\d+\)\)", out)


def test_footnotes_sources_and_menus_cost_few_tokens_and_stay_reachable(blog):
    ctx, url = blog
    out = scan(ctx, url=url + "notes.html")
    # a list the footnote marks point to: its sources read as text, reached through one note under it
    assert "- Field notes on garlic, Allotment Monthly." in out and "[Field notes on garlic]#" not in out, out
    note = re.search(r"\(links in these notes: (document\.querySelectorAll\('\[data-ga=\"\d+\"\] a'\))\)", out)
    assert note, out
    got = web_execute_js.run({"script": f"[...{note.group(1)}].map((a) => a.textContent).join('|')"}, ctx).content
    assert all(source in got for source in SOURCES), got
    # the marks stay as text, a link of the text keeps its ref
    assert "cloves [1] [2] [3] [4], which" in out and re.search(r"\[raised beds\]#\d+ drain best", out)
    # a menu's links on one line; a placeholder that repeats the name said once; a platform's credit left out
    assert re.search(r"^\[Home\]#\d+ \[Archive\]#\d+ \[About\]#\d+ ", out, re.M), out
    assert re.search(r"\[input name=search\]#\d+", out) and "placeholder" not in out
    assert re.search(r"\[Contact\]#\d+", out) and "Powered by" not in out
