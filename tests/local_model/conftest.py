"""The local-model tier's fixtures: one real llama-cpp-python server for the session, behind a
counting proxy, and the small corpus from the shared fixtures.

``make test`` collects this tier and skips it (the server's build takes minutes to most of an
hour); ``make test-local-model`` installs the server and the model, then runs it."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
from local_server import MODEL, MODEL_FILE, N_CTX, SERVER_PYTHON, CountingProxy, free_port


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CountingProxy]:
    if not SERVER_PYTHON.exists() or not MODEL_FILE.exists():
        pytest.fail(
            f"no local model server: {SERVER_PYTHON} or {MODEL_FILE} is missing "
            "(run `make test-local-model`, which installs both)"
        )
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [
                str(SERVER_PYTHON),
                "-m",
                "llama_cpp.server",
                "--model",
                str(MODEL_FILE),
                "--model_alias",
                MODEL,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                str(N_CTX),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    upstream = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        try:
            if httpx.get(upstream + "/v1/models", timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the local model server did not start:\n" + log.read_text()[-3000:])
        time.sleep(0.5)
    proxy = CountingProxy(upstream).start()
    try:
        yield proxy
    finally:
        proxy.stop()
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
