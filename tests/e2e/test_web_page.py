"""The web page in a real headless Chromium (the OS package, driven by Playwright) against
``deep-research serve`` as a subprocess: start a run from the form, watch it, read the report,
follow a citation to its source, find one timeline bar per researcher, and see the Answer's
table as a table."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The serve command registered the way cli.py does, so this works before and after wiring.
LAUNCH = "from deepresearch import cli; from deepresearch.commands import serve as cli_serve; cli_serve.register(cli.cli); cli.main()"
QUERY = "Compare ACME Corp sales, Globex Inc revenue, ACME dividend, Globex expansion and ACME factories"
TREND_QUERY = "How has ACME Corp's total net sales changed over time?"
# quarter end, total net sales then, a year earlier, the filing's name
QUARTERS = (
    ("September 30, 2023", "1,120", "990", "2023 Q3"),
    ("December 31, 2023", "1,180", "1,050", "2023 Q4"),
    ("March 31, 2024", "1,234", "1,100", "2024 Q1"),
)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEP_RESEARCH_")}
    env.update({"RAY_AUTH_MODE": "disabled", "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    return env


@contextmanager
def _serving(tmp_path: Path, corpus: Path) -> Iterator[tuple[str, Path]]:
    (tmp_path / "out").mkdir()
    config = tmp_path / "config.yaml"
    config.write_text(
        json.dumps(  # JSON is YAML
            {
                "state_dir": str(tmp_path / "state"),
                "corpus": {"path": str(corpus), "cache_dir": str(tmp_path / "cache")},
                "run": {"output_dir": str(tmp_path / "out")},
                "simulate": {"latency_s": 0.1},
            }
        )
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "serve", "--port", "0", "--config", str(config)],
        env=_env(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put("")  # the process ended

    threading.Thread(target=drain, daemon=True).start()
    url = ""
    seen = []
    while not url:
        line = lines.get(timeout=180)
        seen.append(line)
        assert line, f"serve exited early: {''.join(seen)}"
        if "serving on " in line:
            url = line.split("serving on ", 1)[1].strip()
    try:
        yield url, tmp_path / "state"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture()
def service(tmp_path: Path, small_corpus: Path) -> Iterator[tuple[str, Path]]:
    with _serving(tmp_path, small_corpus) as served:
        yield served


def build_quarterly_corpus(root: Path) -> Path:
    """Three quarterly reports of one company, each an HTML page with its statements' table: a
    trend question over them is answered with a period -> value table."""
    root.mkdir(parents=True)
    for date, now, before, name in QUARTERS:
        prose = f"<p>{f'ACME Corp reported its results for the quarter ended {date}. ' * 3}</p>"
        (root / f"{name} ACME.html").write_text(
            f"<html><head><title>ACME Corp quarterly report {name}</title></head><body><article>"
            f"<h1>ACME Corp quarterly report</h1><p>For the quarter ended {date}.</p>{prose}"
            "<table><caption>Condensed statements of operations (in millions)</caption>"
            f"<tr><th></th><th>Three Months Ended {date}</th>"
            "<th>Three Months Ended a year earlier</th></tr>"
            f"<tr><td>Total net sales</td><td>{now}</td><td>{before}</td></tr>"
            f"<tr><td>Net income</td><td>200</td><td>180</td></tr></table>{prose}"
            "</article></body></html>"
        )
    return root


@pytest.fixture()
def trend_service(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with _serving(tmp_path, build_quarterly_corpus(tmp_path / "corpus")) as served:
        yield served


def _researchers(state: Path) -> int:
    (run_dir,) = (state / "runs").iterdir()
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return sum(1 for e in events if e["type"] == "researcher_started")


@pytest.fixture()
def browser() -> Iterator[Any]:
    """Chromium under Playwright; asked for before the service, so a missing browser skips the
    test before a service (and its Ray) is started for nothing."""
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: install the OS package (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.mark.slow
def test_the_answers_table_is_a_table_on_the_page(
    browser: Any, trend_service: tuple[str, Path]
) -> None:
    url, _ = trend_service
    page = browser.new_page(viewport={"width": 1000, "height": 600})
    blocked: list[str] = []  # alignment as style="" would be refused by the page's CSP
    page.on(
        "console",
        lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    page.goto(url)
    page.fill("#query", TREND_QUERY)
    page.click("#submit")
    page.wait_for_selector("#report h2", timeout=180_000)
    assert "completed" in page.inner_text("#status")
    table = page.locator("#report table")
    assert table.count() == 1
    head = table.locator("thead th").all_inner_texts()
    assert len(head) == 2 and "Total net sales" in head[1], head
    rows = [
        [cell.strip() for cell in row.locator("td").all_inner_texts()]
        for row in table.locator("tbody tr").all()
    ]
    assert [r[0] for r in rows] == [f"Three Months Ended {q[0]}" for q in QUARTERS], rows
    assert [r[1].split(" [")[0] for r in rows] == [q[1] for q in QUARTERS], rows
    for cite in table.locator("a.cite").all():  # every row's citation leads to its source
        target = cite.get_attribute("href") or ""
        assert target.startswith("#source-") and page.locator(target).count() == 1
    assert table.locator("a.cite").count() == len(QUARTERS)
    assert "| ---" not in page.inner_text("#report")  # no raw pipes left
    assert blocked == []


@pytest.mark.slow
def test_the_page_runs_research_and_links_citations(
    browser: Any, service: tuple[str, Path]
) -> None:
    url, state = service
    page = browser.new_page(viewport={"width": 1000, "height": 600})
    blocked: list[str] = []  # the page must work under its own CSP: nothing refused
    page.on(
        "console",
        lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    loaded = page.goto(url)
    assert loaded is not None
    assert "script-src 'self'" in loaded.headers.get("content-security-policy", "")
    page.fill("#query", QUERY)
    page.select_option("#mode", "deep")
    page.click("#submit")
    page.wait_for_selector("#report h2", timeout=180_000)
    assert "completed" in page.inner_text("#status")
    assert "?run=" in page.url

    # one timeline bar per researcher, all finished
    bars = page.locator("#timeline svg rect.bar")
    assert bars.count() == _researchers(state) >= 2
    assert page.locator("#timeline svg rect.bar.finished").count() == bars.count()

    # a citation links and scrolls to its source
    cite = page.locator("#report a.cite").first
    target = cite.get_attribute("href") or ""
    assert target.startswith("#source-")
    page.evaluate("window.scrollTo(0, 0)")
    cite.click()
    assert page.url.endswith(target)
    source = page.locator(target)
    assert source.evaluate("e => e.matches(':target')")
    assert source.evaluate(
        "e => { const r = e.getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= window.innerHeight; }"
    )
    assert page.locator("#report li[id^=source-]").count() >= 1
    assert blocked == []


def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCH, "serve", "--host", "0.0.0.0", "--port", "0"],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "DEEP_RESEARCH_API_TOKEN" in lines[0], proc.stderr
