"""Check the built pkgdown site in headless Chromium, offline.

Serves the site folder on 127.0.0.1, visits the home page, every reference
page and every article, and fails on a broken internal link, an image that
does not load, a resource fetched from another host, or a console error.
Saves screenshots of the home page and the device-mesh article.

Usage: python3 tools/site_check.py SITE_DIR
Needs Debian's chromium, chromium-driver and python3-selenium.
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,1600",
]
SCREENSHOTS = {"index.html": "home.png",
               "articles/device-mesh.html": "device-mesh.png",
               "articles/pictures.html": "pictures.png"}

BROKEN_IMAGES_JS = """
return Array.from(document.images)
  .filter(i => !(i.complete && i.naturalWidth > 0))
  .map(i => i.currentSrc || i.src);
"""
LINKS_JS = "return Array.from(document.querySelectorAll('a[href]'))" \
           ".map(a => a.href);"
RESOURCES_JS = "return performance.getEntriesByType('resource')" \
               ".map(r => r.name);"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D102 - keep the output short
        pass


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve `root` on a free port of 127.0.0.1; return server and base URL."""
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/"


def pages_to_visit(root: Path) -> list[str]:
    """The home page, every reference page and every article, as paths."""
    pages = ["index.html", "news/index.html"]
    for folder in ("reference", "articles"):
        pages += sorted(p.relative_to(root).as_posix()
                        for p in (root / folder).glob("*.html"))
    return pages


def browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"),
                            options=options)


def link_ok(url: str, cache: dict[str, bool]) -> bool:
    """Whether an internal URL (without its fragment) answers 200."""
    url = urllib.parse.urldefrag(url)[0]
    if url not in cache:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                cache[url] = response.status == 200
        except (urllib.error.URLError, OSError):
            cache[url] = False
    return cache[url]


def check_page(driver, base: str, page: str, cache: dict) -> list[str]:
    """Problems found on one page, as lines."""
    driver.get(base + page)
    problems = [f"{page}: console: {entry['message']}"
                for entry in driver.get_log("browser")
                if entry["level"] == "SEVERE"]
    problems += [f"{page}: image does not load: {src}"
                 for src in driver.execute_script(BROKEN_IMAGES_JS)]
    problems += [f"{page}: fetched from the network: {url}"
                 for url in driver.execute_script(RESOURCES_JS)
                 if not url.startswith(base)]
    problems += [f"{page}: broken link: {href}"
                 for href in driver.execute_script(LINKS_JS)
                 if href.startswith(base) and not link_ok(href, cache)]
    return problems


def screenshot(driver, base: str, page: str, path: Path) -> None:
    driver.get(base + page)
    height = driver.execute_script(
        "return document.documentElement.scrollHeight;")
    driver.set_window_size(1280, min(max(height, 800), 6000))
    driver.save_screenshot(str(path))
    driver.set_window_size(1280, 1600)


def main(site: str) -> int:
    root = Path(site).resolve()
    if not (root / "index.html").is_file():
        print(f"site-check: no site at {root}; run `make site` first")
        return 1
    server, base = serve(root)
    driver = browser()
    problems: list[str] = []
    try:
        pages = pages_to_visit(root)
        cache: dict[str, bool] = {}
        for page in pages:
            problems += check_page(driver, base, page, cache)
        shots = root / "screenshots"
        shots.mkdir(exist_ok=True)
        for page, name in SCREENSHOTS.items():
            screenshot(driver, base, page, shots / name)
    finally:
        driver.quit()
        server.shutdown()
    for line in problems:
        print(line)
    print(f"site-check: {len(pages)} pages, {len(cache)} internal links, "
          f"{len(problems)} problems; screenshots in {root / 'screenshots'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs"))
