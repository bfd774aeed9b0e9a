"""What another web page (or a hostile client) cannot make the service do: answer a rebound Host,
accept a cross-origin write or a non-JSON body, index a folder outside the corpus roots, or fail
with a 500 on a malformed request. Every response carries the browser security headers."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest
from loopback_app import LoopbackApps

from deepresearch.config.settings import Settings, load_settings
from deepresearch.service.app import create_app

Serve = Callable[..., Awaitable[httpx.AsyncClient]]
EVIL = "http://evil.example"


def settings_in(tmp_path: Path, **service: Any) -> Settings:
    (tmp_path / "out").mkdir(exist_ok=True)
    flags = {"state_dir": tmp_path / "state", "run": {"output_dir": tmp_path / "out"}}
    return load_settings(None, {**flags, "service": service}, env={})


@pytest.fixture()
async def serve() -> AsyncIterator[Serve]:
    apps = LoopbackApps()

    async def start(settings: Settings, hosts: tuple[str, ...] = ()) -> httpx.AsyncClient:
        return await apps.client(create_app(settings, hosts=hosts))

    yield start
    await apps.close()


def no_runs(tmp_path: Path) -> bool:
    runs = tmp_path / "state" / "runs"
    return not runs.exists() or not any(runs.iterdir())


async def test_a_rebound_host_is_refused_and_the_bound_names_answer(
    serve: Serve, tmp_path: Path
) -> None:
    client = await serve(settings_in(tmp_path, allowed_hosts=["proxy.example"]), ("10.1.2.3",))
    port = client.base_url.port
    rebound = await client.get("/runs", headers={"Host": f"rebind.evil.example:{port}"})
    assert rebound.status_code == 403 and "does not answer to host" in rebound.json()["error"]
    page = await client.get("/", headers={"Host": "rebind.evil.example"})
    assert page.status_code == 403  # the page too: a rebound page must not load its script
    report = await client.get("/runs/20261122-100000-abcdef/report", headers={"Host": "a.b"})
    assert report.status_code == 403
    for host in (f"localhost:{port}", f"[::1]:{port}", f"127.0.0.1:{port}", "10.1.2.3:80"):
        assert (await client.get("/runs", headers={"Host": host})).status_code == 200, host
    assert (await client.get("/runs", headers={"Host": "PROXY.example."})).status_code == 200
    assert (await client.get("/runs", headers={"Host": "user@localhost"})).status_code == 403


async def test_cross_origin_writes_are_refused(serve: Serve, tmp_path: Path) -> None:
    client = await serve(settings_in(tmp_path))
    port = client.base_url.port
    for origin in (EVIL, "null", f"http://localhost:{port + 1}", f"http://evil.example:{port}"):
        sent = await client.post("/runs", json={"query": "What?"}, headers={"Origin": origin})
        assert sent.status_code == 403, origin
        assert "cross-origin" in sent.json()["error"]
    cancel = await client.delete("/runs/20261122-100000-abcdef", headers={"Origin": EVIL})
    assert cancel.status_code == 403
    assert no_runs(tmp_path)
    # The page's own origin passes the guard (and then fails on the empty query, as it should).
    own = await client.post(
        "/runs", json={"query": "   "}, headers={"Origin": f"http://127.0.0.1:{port}"}
    )
    assert own.status_code == 422 and "empty" in own.json()["error"]


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None],
)
async def test_a_body_that_is_not_json_is_415(
    serve: Serve, tmp_path: Path, content_type: str | None
) -> None:
    client = await serve(settings_in(tmp_path))
    headers = {"Content-Type": content_type} if content_type else {}
    sent = await client.post("/runs", content=b'{"query": "What?"}', headers=headers)
    assert sent.status_code == 415 and "application/json" in sent.json()["error"]
    assert no_runs(tmp_path)


async def test_every_response_carries_the_security_headers(serve: Serve, tmp_path: Path) -> None:
    client = await serve(settings_in(tmp_path))
    responses = [
        await client.get("/"),
        await client.get("/static/app.js"),
        await client.get("/runs"),
        await client.get("/runs/nope"),
        await client.post("/runs", content=b"x", headers={"Content-Type": "text/plain"}),
        await client.get("/runs", headers={"Host": "evil.example"}),
    ]
    for response in responses:
        csp = response.headers.get("Content-Security-Policy", "")
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, response.url
        assert "'unsafe-inline'" not in csp
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"


def test_the_page_works_under_the_csp_no_inline_script_or_style() -> None:
    static = resources.files("deepresearch.service").joinpath("static")
    page = static.joinpath("index.html").read_text("utf-8")
    scripts = re.findall(r"<script([^>]*)>", page)
    assert scripts and all("src=" in attrs for attrs in scripts)
    assert "<style" not in page and " style=" not in page and "javascript:" not in page
    assert not re.search(r"\son[a-z]+=", page)  # no inline event handlers
    for name in ("app.js", "timeline.js"):
        code = static.joinpath(name).read_text("utf-8")
        assert "style=" not in code and ".style." not in code and "eval(" not in code, name


async def test_malformed_requests_are_4xx_never_500(serve: Serve, tmp_path: Path) -> None:
    client = await serve(settings_in(tmp_path))
    deep = b"[" * 100_000 + b"]" * 100_000
    nested = await client.post("/runs", content=deep, headers={"Content-Type": "application/json"})
    assert nested.status_code == 422 and "JSON" in nested.json()["error"]
    for body in (b'{"query": "q", "max_cost_usd": Infinity}', b'{"query": "q", "max_time_s": NaN}'):
        sent = await client.post(
            "/runs", content=body, headers={"Content-Type": "application/json"}
        )
        assert sent.status_code == 422, body
    overflow = await client.post(
        "/runs",
        content=b'{"query": "q", "max_cost_usd": 1e999}',  # parses to inf
        headers={"Content-Type": "application/json"},
    )
    assert overflow.status_code == 422
    coerced = await client.post("/runs", json={"query": "q", "max_parallel": "3"})
    assert coerced.status_code == 422
    assert coerced.json()["details"][0]["field"] == "max_parallel"
    long_id = "9" * 5000
    for method, path in (
        ("GET", f"/runs/{long_id}"),
        ("GET", f"/runs/{long_id}/events"),
        ("GET", f"/runs/{long_id}/report"),
        ("DELETE", f"/runs/{long_id}"),
    ):
        assert (await client.request(method, path)).status_code == 404, path
    assert no_runs(tmp_path)


async def test_a_bad_resume_point_is_422(serve: Serve, tmp_path: Path) -> None:
    from deepresearch.storage.run_dir import RunDir

    settings = settings_in(tmp_path)
    RunDir.create(settings.resolved_state_dir(), "20261122-100000-abcdef")
    client = await serve(settings)
    sent = await client.get("/runs/20261122-100000-abcdef/events?last_event_id=%C2%B2")
    assert sent.status_code == 422 and "last_event_id" in sent.json()["error"]
    header = await client.get("/runs/20261122-100000-abcdef/events", headers={"Last-Event-ID": "x"})
    assert header.status_code == 422


async def test_a_client_corpus_outside_the_roots_is_403(serve: Serve, tmp_path: Path) -> None:
    secret = tmp_path / "private"
    secret.mkdir(mode=0o700)
    (secret / "secret.txt").write_text("the launch code is 0000")
    closed = await serve(settings_in(tmp_path))
    refused = await closed.post("/runs", json={"query": "What is the code?", "corpus": str(secret)})
    assert refused.status_code == 403 and "corpus_roots is empty" in refused.json()["error"]

    root = tmp_path / "corpora"
    root.mkdir()
    (root / "escape").symlink_to(secret, target_is_directory=True)
    client = await serve(settings_in(tmp_path, corpus_roots=[root]))
    for corpus in ("/etc", str(secret), str(root / "escape"), str(root / ".." / "private")):
        sent = await client.post("/runs", json={"query": "What is the code?", "corpus": corpus})
        assert sent.status_code == 403, corpus
        assert "corpus roots" in sent.json()["error"]
    assert no_runs(tmp_path)


async def test_every_error_the_service_answers_is_json(serve: Serve, tmp_path: Path) -> None:
    """aiohttp's own 404 (no route), 405 (no method) and 413 (body over 1 MiB) were plain text,
    and a NUL byte in a static file name was a text 500: the README says errors are JSON."""
    client = await serve(settings_in(tmp_path))
    missing = await client.get("/no/such/route")
    assert missing.status_code == 404 and "/no/such/route" in missing.json()["error"]
    method = await client.put("/runs", json={"query": "q"})
    assert method.status_code == 405 and "PUT" in method.json()["error"]
    assert "POST" in method.headers["Allow"]
    big = await client.post(
        "/runs", content=b" " * (2 << 20), headers={"Content-Type": "application/json"}
    )
    assert big.status_code == 413 and "larger than" in big.json()["error"]
    nul = await client.get("/static/app%00.js")
    assert nul.status_code == 404 and nul.json()["error"]
    for response in (missing, method, big, nul):
        assert response.headers["Content-Type"].startswith("application/json")
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert no_runs(tmp_path)


async def test_a_corpus_path_with_a_nul_byte_is_422_not_500(serve: Serve, tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    root.mkdir()
    client = await serve(settings_in(tmp_path, corpus_roots=[root]))
    sent = await client.post("/runs", json={"query": "What is revenue?", "corpus": f"{root}/a\0b"})
    assert sent.status_code == 422, sent.text
    assert sent.json()["details"] == [
        {"field": "corpus", "message": "Value error, a path cannot contain a NUL byte"}
    ]
    assert no_runs(tmp_path)
