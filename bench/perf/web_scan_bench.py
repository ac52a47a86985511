"""Benchmark web_scan on saved-page corpora: compression, main-content recall per page, controls kept, latency.

    python bench/perf/web_scan_bench.py [CORPUS_DIR ...] [--out DIR] [--pages ars-1,tmz-1]

Default corpora: the shared Readability corpus (43 real pages) and tests/tools/pages/recall (pages built like
real sites where text is easy to lose: text inside many links, formulas in KaTeX, MathJax 3 and MathML, image-heavy
blog layouts). Each corpus is served on http://127.0.0.1 (requests to any other host are aborted: never the
internet). Recall and compression are computed with the reference scorer (../shared/tools/score_web_scan.py),
which is also run on the saved outputs (DIR/<corpus>.json) so the figures can be compared line by line.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import ClassVar

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ga.config import load_settings  # noqa: E402
from ga.tooling.spec import ToolContext  # noqa: E402
from tools import web_scan  # noqa: E402
from tools.web.session import get_session  # noqa: E402

# the shared folder beside the checkout (a worktree may sit one level deeper): the first one that exists
SHARED = next((p / "shared" for p in REPO.parents if (p / "shared" / "web-corpus").is_dir()), REPO.parent / "shared")
DEFAULT_CORPUS = SHARED / "web-corpus" / "readability"
RECALL_CORPUS = REPO / "tests" / "tools" / "pages" / "recall"
SCORER = SHARED / "tools" / "score_web_scan.py"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    # the corpus is saved as UTF-8 and most pages lack a charset meta: say so, as their servers did
    extensions_map: ClassVar[dict[str, str]] = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                                                ".html": "text/html; charset=utf-8"}

    def log_message(self, *args: object) -> None:
        pass


class _UI:
    def notice(self, text: str) -> None:
        print(f"  ({text})", file=sys.stderr)


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def load_scorer(path: Path):
    sys.path.insert(0, str(path.parent))
    import score_web_scan

    return score_web_scan


def block_the_internet(session) -> None:
    def only_local(route) -> None:
        host = route.request.url.split("/")[2] if "://" in route.request.url else ""
        if route.request.url.startswith(("data:", "blob:")) or host.startswith("127.0.0.1"):
            route.fallback()  # on to ga's own network rules
        else:
            route.abort()

    session.context.route("**/*", only_local)


def controls_kept(session, text: str, regions: list[dict]) -> tuple[int, int]:
    """Main-region controls and links: (total, kept); kept = shown as #N or under a fold note in the output.

    On a page cut to fit the budget, the controls past the cut count as not kept (they are in the saved file)."""
    refs = [n for r in regions if r["kind"] in ("main", "dialog") for n in r.get("refs") or []]
    shown = {int(n) for n in re.findall(r"#(\d+)", text)}
    folds = [int(n) for n in re.findall(r'data-ga="(\d+)"', text)]
    missing = [n for n in refs if n not in shown]
    if missing and folds:
        script = "([refs, folds]) => refs.filter(n => !folds.some(f => $ga(f) && $ga(n) && $ga(f).contains($ga(n))))"
        missing = session.call(lambda s: s.tabs[s.current].evaluate(script, [missing, folds]))
    return len(refs), len(refs) - len(missing)


def scan(ctx: ToolContext, url: str | None, text_only: bool) -> tuple[str, dict, float]:
    args = {"url": url} if url else {}
    if text_only:
        args["text_only"] = True
    started = time.perf_counter()
    result = web_scan.run(args, ctx)
    return result.content, result.details, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="*", default=[str(DEFAULT_CORPUS), str(RECALL_CORPUS)])
    parser.add_argument("--out", default=str(Path(__file__).parent / "out"), help="folder for the scorer's inputs")
    parser.add_argument("--pages", default="", help="comma-separated page folders (default: all)")
    opts = parser.parse_args()
    scorer = load_scorer(SCORER.resolve())
    home = Path(tempfile.mkdtemp(prefix="ga-bench-"))
    settings = load_settings(env={}, home=home, workdir=home, browser_profile=False)
    ctx = ToolContext(settings=settings, run_dir=home / "run", ui=_UI())
    session = get_session(ctx)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        session.call(lambda s: (s.ensure(), block_the_internet(s)))
        first_call = None
        for folder in map(Path, opts.corpus):
            corpus = folder.resolve()
            pages = sorted(p.name for p in corpus.iterdir() if (p / "source.html").is_file())
            pages = [p for p in pages if not opts.pages or p in opts.pages.split(",")]
            if not pages:
                continue
            server, base = serve(corpus)
            try:
                if first_call is None:
                    scan(ctx, f"{base}/{pages[0]}/source.html", False)
                    first_call = time.perf_counter() - started
                rows, outputs = bench_corpus(ctx, session, scorer, corpus, base, pages)
            finally:
                server.shutdown()
            report(corpus.name, rows)
            score(corpus, outputs, out)
    finally:
        session.close()
    if first_call is not None:
        print(f"\nfirst call (browser start + open + scan) {first_call:.2f}s")


def bench_corpus(ctx, session, scorer, corpus: Path, base: str, pages: list[str]) -> tuple[list[dict], dict]:
    print(f"\n== {corpus}")
    print(f"{'page':32s} {'raw':>7s} {'out':>6s} {'x':>6s} {'recall':>6s} {'ctrl':>9s} "
          f"{'txt x':>6s} {'recall':>6s} {'nav+scan':>8s} {'scan':>6s}")
    rows, outputs = [], {"normal": {}, "text_only": {}}
    for page in pages:
        rows.append(bench_page(ctx, session, scorer, corpus, base, page, outputs["normal"], outputs["text_only"]))
    return rows, outputs


def score(corpus: Path, outputs: dict, out: Path) -> None:
    """The reference scorer on the saved outputs, for comparison."""
    for label, texts in outputs.items():
        path = out / f"{corpus.name}{'' if label == 'normal' else '.text_only'}.json"
        path.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        done = subprocess.run([sys.executable, str(SCORER), str(corpus), str(path)], capture_output=True, text=True,
                              check=False)
        print(f"reference scorer ({label}): {(done.stdout.strip().splitlines() or ['(no output)'])[-1]}")


def bench_page(ctx, session, scorer, corpus: Path, base: str, page: str, outputs: dict, outputs_text: dict) -> dict:
    url = f"{base}/{page}/source.html"
    raw = (corpus / page / "source.html").read_text(encoding="utf-8", errors="replace")
    expected = scorer.grams(scorer.text_of((corpus / page / "expected.html").read_text(encoding="utf-8",
                                                                                         errors="replace")))
    text, details, nav_time = scan(ctx, url, False)
    _, _, warm = scan(ctx, None, False)
    total, kept = controls_kept(session, text, details["regions"])
    plain, _, _ = scan(ctx, url, True)
    outputs[page], outputs_text[page] = text, plain

    def recall(out: str) -> float:
        return len(expected & scorer.grams(scorer.text_of(out))) / max(1, len(expected))

    row = {"page": page, "raw": scorer.ntok(raw), "out": scorer.ntok(text), "recall": recall(text),
           "text_out": scorer.ntok(plain), "text_recall": recall(plain), "controls": total, "kept": kept,
           "nav": nav_time, "warm": warm}
    row["x"], row["text_x"] = row["raw"] / max(1, row["out"]), row["raw"] / max(1, row["text_out"])
    print(f"{page:32s} {row['raw']:7d} {row['out']:6d} {row['x']:6.1f} {row['recall']:6.2f} "
          f"{kept:4d}/{total:<4d} {row['text_x']:6.1f} {row['text_recall']:6.2f} "
          f"{nav_time * 1000:6.0f}ms {warm * 1000:4.0f}ms", flush=True)
    return row


def report(name: str, rows: list[dict]) -> None:
    med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
    lost = [(r["page"], r["controls"] - r["kept"]) for r in rows if r["kept"] < r["controls"]]
    print(f"{name}: {len(rows)} pages")
    print(f"normal:    median compression x{med('x'):.1f}, median recall {med('recall'):.3f}, "
          f"under 0.8: {[r['page'] for r in rows if r['recall'] < 0.8]}")
    print(f"text_only: median compression x{med('text_x'):.1f}, median recall {med('text_recall'):.3f}, "
          f"under 0.8: {[r['page'] for r in rows if r['text_recall'] < 0.8]}")
    print(f"main-region controls kept: {sum(r['kept'] for r in rows)}/{sum(r['controls'] for r in rows)}; "
          f"lost on: {lost or 'none'}")
    print(f"latency: warm open+scan median {med('nav') * 1000:.0f} ms; warm rescan median {med('warm') * 1000:.0f} ms")


if __name__ == "__main__":
    main()
