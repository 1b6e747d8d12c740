"""Open every built page of the site in headless Chromium and fail on what a reader would see.

Run after ``sphinx-build -b html docs docs/_build/html`` (``make docs-check`` does both)::

    python docs/check_pages.py docs/_build/html [--width 1280] [--screenshots DIR]

Each page is loaded at the given window width (1280 px by default) from a local HTTP
server, and these are errors:

- an element inside the content column that is wider than the column, or that scrolls
  sideways (a table or a code block the reader must scroll to read to the end);
- an image that did not load;
- a link to a page or an anchor (``#id``) that the site does not have;
- a console error, an uncaught script error, or a file the page asked for and did not get;
- LaTeX left as text (``\\[`` or ``\\(`` outside code): MathJax did not render it.

The browser is the system's Chromium (Debian's ``chromium`` package), driven by
Playwright with ``executable_path``: nothing is downloaded. The exit status is 1 when a
page fails, and every failure is printed with its page.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlparse

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")

# Runs in the page once MathJax (if the page loads it) has finished typesetting. Returns the
# ids the page defines, its links, its broken images, the elements wider than the content
# column and the text left with LaTeX delimiters.
PAGE_PROBE = r"""
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await document.fonts.ready;  // MathJax's fonts load after it typesets
  const column = document.querySelector("article[role=main]") || document.body;
  const limit = column.getBoundingClientRect().right + 1;
  // The content box must fit: furo lets headings pad into the margin.
  const right = (el, r, s) => r.right - parseFloat(s.paddingRight) - parseFloat(s.borderRightWidth);
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (el.className && typeof el.className === "string") {
      s += "." + el.className.trim().split(/\s+/).join(".");
    }
    const text = (el.innerText || "").trim().replace(/\s+/g, " ").slice(0, 60);
    return s + (text ? ' "' + text + '"' : "");
  };
  const wide = [];
  for (const el of column.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.display === "none") continue;
    const scrolls = el.scrollWidth > el.clientWidth + 1 &&
      ["auto", "scroll"].includes(style.overflowX);
    if (right(el, r, style) > limit) {
      wide.push(describe(el) + ": right edge " + Math.round(right(el, r, style)) + " px > column " +
                Math.round(limit) + " px");
    } else if (scrolls) {
      wide.push(describe(el) + ": scrolls sideways (" + el.scrollWidth + " px of content in " +
                el.clientWidth + " px)");
    }
    if (wide.length >= 5) break;
  }
  const ids = [...document.querySelectorAll("[id]")].map((e) => e.id)
    .concat([...document.querySelectorAll("a[name]")].map((e) => e.getAttribute("name")));
  const links = [...document.querySelectorAll("a[href]")].map((a) => a.href);
  const broken = [...document.querySelectorAll("img")]
    .filter((img) => !img.complete || img.naturalWidth === 0)
    .map((img) => img.getAttribute("src"));
  // Text outside code, math and scripts that still holds LaTeX delimiters.
  const latex = [];
  const walker = document.createTreeWalker(column, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest("pre, code, script, style, mjx-container, textarea")) continue;
    const t = node.textContent;
    if (t.includes("\\[") || t.includes("\\(")) latex.push(t.trim().slice(0, 60));
  }
  return {ids, links, broken, wide, latex};
}
"""


@dataclass
class PageReport:
    """What one page showed: its anchors and links, and the errors seen on it."""

    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def find_chromium(explicit: str | None) -> str:
    """Return the path of the system's Chromium, or exit with how to install it."""
    if explicit:
        return explicit
    for name in CHROMIUM_CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    sys.exit(
        "check_pages: no Chromium found; install it (Debian: apt-get install chromium) "
        "or pass --chromium PATH"
    )


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve ``root`` over HTTP on a free local port, quietly, from a daemon thread."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def check_page(page: object, url: str) -> PageReport:
    """Load one page and return what it defines and what went wrong on it."""
    report = PageReport()

    def on_console(msg: Any) -> None:
        where = msg.location.get("url", "")
        # Chromium asks every new site for /favicon.ico; Sphinx sites have none.
        if msg.type == "error" and not where.endswith("/favicon.ico"):
            report.errors.append(f"console error: {msg.text} ({where})")

    on_error = lambda exc: report.errors.append(f"script error: {exc}")  # noqa: E731
    on_response = lambda resp: (  # noqa: E731
        report.errors.append(f"HTTP {resp.status}: {resp.url}") if resp.status >= 400 else None
    )
    on_failed = lambda req: report.errors.append(f"request failed: {req.url} ({req.failure})")  # noqa: E731
    page.on("console", on_console)  # type: ignore[attr-defined]
    page.on("pageerror", on_error)  # type: ignore[attr-defined]
    page.on("response", on_response)  # type: ignore[attr-defined]
    page.on("requestfailed", on_failed)  # type: ignore[attr-defined]
    try:
        page.goto(url, wait_until="load")  # type: ignore[attr-defined]
        found = page.evaluate(PAGE_PROBE)  # type: ignore[attr-defined]
    finally:
        page.remove_listener("console", on_console)  # type: ignore[attr-defined]
        page.remove_listener("pageerror", on_error)  # type: ignore[attr-defined]
        page.remove_listener("response", on_response)  # type: ignore[attr-defined]
        page.remove_listener("requestfailed", on_failed)  # type: ignore[attr-defined]
    report.ids = set(found["ids"])
    report.links = found["links"]
    report.errors += [f"too wide: {w}" for w in found["wide"]]
    report.errors += [f"broken image: {src}" for src in found["broken"]]
    report.errors += [f"LaTeX not rendered: {t!r}" for t in found["latex"]]
    return report


def check_links(reports: dict[str, PageReport], base: str, root: Path) -> dict[str, list[str]]:
    """Return, per page, its links to a missing page or a missing anchor of a site page."""
    missing: dict[str, list[str]] = {}
    for url, report in reports.items():
        for link in report.links:
            if not link.startswith(base):
                continue  # another site: not checked here (no network)
            target, anchor = urldefrag(link)
            path = unquote(urlparse(target).path)
            rel = path[len(urlparse(base).path) :] or "index.html"
            if rel.endswith("/"):
                rel += "index.html"
            if not (root / rel).exists():
                missing.setdefault(url, []).append(f"link to a missing page: {link}")
            elif anchor and target in reports and anchor not in reports[target].ids:
                missing.setdefault(url, []).append(f"link to a missing anchor: {link}")
    return missing


def main(argv: list[str] | None = None) -> int:  # noqa: C901  (options, build check, browse, report)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "html",
        nargs="?",
        default="docs/_build/html",
        help="the built site (default: docs/_build/html)",
    )
    parser.add_argument("--width", type=int, default=1280, help="window width in px (1280)")
    parser.add_argument("--height", type=int, default=900, help="window height in px (900)")
    parser.add_argument("--chromium", help="path of the Chromium binary (default: on PATH)")
    parser.add_argument(
        "--screenshots", type=Path, help="save a full-page PNG of the pages named by --shoot here"
    )
    parser.add_argument(
        "--shoot",
        nargs="*",
        default=["index.html"],
        help="pages to photograph, relative to the site (default: index.html)",
    )
    parser.add_argument(
        "--only",
        nargs="*",
        help="check only these pages (relative paths); links are still "
        "checked against every page's anchors",
    )
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    root = Path(args.html).resolve()
    if not (root / "index.html").exists():
        sys.exit(
            f"check_pages: {root} holds no index.html; build the site first "
            "(sphinx-build -b html docs docs/_build/html)"
        )
    pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))
    chosen = set(args.only) if args.only else set(pages)
    start = time.perf_counter()
    server, base = serve(root)
    reports: dict[str, PageReport] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(args.chromium))
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            for rel in pages:
                url = urljoin(base, rel)
                report = check_page(page, url)
                if rel not in chosen:
                    report.errors = []
                reports[url] = report
                if args.screenshots and rel in args.shoot:
                    shot = args.screenshots / (rel.replace("/", "_")[:-5] + ".png")
                    shot.parent.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(shot), full_page=True)
            browser.close()
    finally:
        server.shutdown()
    for url, problems in check_links(reports, base, root).items():
        if url[len(base) :] in chosen:
            reports[url].errors += problems
    failed = 0
    for url, report in reports.items():
        if report.errors:
            failed += 1
            print(f"{url[len(base) :]}:")
            for problem in report.errors[:20]:
                print(f"  {problem}")
            if len(report.errors) > 20:
                print(f"  ... and {len(report.errors) - 20} more")
    took = time.perf_counter() - start
    print(
        f"check_pages: {len(chosen)} pages at {args.width} px, {failed} with problems "
        f"({took:.1f} s)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
