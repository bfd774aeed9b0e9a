"""``deep-research submit`` against a ``ray start --head`` with Ray's token authentication ON.

Ray 2.60 turns token auth on with ``RAY_AUTH_MODE=token`` and reads the token from
``RAY_AUTH_TOKEN``, then ``RAY_AUTH_TOKEN_PATH``, then ``~/.ray/auth_token``. The head and every
client here get a temporary HOME and explicit variables, so the machine's own ``~/.ray/auth_token``
is never read or written; the head has its own RAY_TMPDIR and process group, and only that group
is ended (never ``ray stop``).
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_submit import BIN, HeadExited, base_env, cli, started_head

QUERY = "What were ACME Corp total net sales for the quarter ended March 31, 2024?"


@dataclass(frozen=True)
class TokenHead:
    url: str
    token: str
    env: dict[str, str]  # a client's env: temporary HOME, no token, no RAY_AUTH_MODE
    home: Path


def wait_for_jobs_server(url: str, token: str, head: subprocess.Popen[bytes]) -> None:
    """Poll the version endpoint with the token (with auth on, it too answers 401 without)."""
    request = urllib.request.Request(
        f"{url}/api/version", headers={"Authorization": f"Bearer {token}"}
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if head.poll() is not None:
            raise HeadExited(f"ray start exited with {head.returncode}")
        try:
            with urllib.request.urlopen(request, timeout=2) as resp:
                if resp.status == 200:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):  # the head is up but refuses our token: a real failure
                raise RuntimeError(f"the head refused its own token ({exc.code})") from None
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the Ray dashboard did not come up")


@pytest.fixture(scope="module")
def token_head() -> Iterator[TokenHead]:
    tmp = Path(tempfile.mkdtemp(prefix="drt", dir="/tmp"))  # short: Ray's socket paths are capped
    (tmp / "home").mkdir()
    client_env = base_env(tmp)
    client_env.pop("RAY_AUTH_MODE")  # each call below decides it
    token = secrets.token_hex(32)
    head_env = {
        **client_env,
        "RAY_TMPDIR": str(tmp / "ray"),
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": token,  # job drivers inherit it from the head's processes
    }
    try:
        with started_head(head_env, tmp, lambda u, h: wait_for_jobs_server(u, token, h)) as (
            _,
            url,
        ):
            yield TokenHead(url, token, client_env, tmp / "home")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.slow
def test_submit_with_token_auth_on(
    token_head: TokenHead, small_corpus: Path, tmp_path: Path
) -> None:
    head = token_head
    out = tmp_path / "out"
    out.mkdir()
    submit = ["submit", QUERY, "--address", head.url, "--corpus", str(small_corpus), "--follow"]
    submit += ["--output-dir", str(out), "--python", str(BIN / "python")]

    # (b) without the token and with auth disabled: one line that names token auth, exit 2.
    refused = one_line_error(cli([*submit, "--auth-mode", "disabled"], head.env, tmp_path))
    assert "requires token authentication" in refused
    assert "--auth-mode token" in refused
    # token mode but a wrong token: says the token is the problem, not the mode.
    wrong = {**head.env, "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    mismatch = one_line_error(cli([*submit, "--auth-mode", "token"], wrong, tmp_path))
    assert "token authentication failed" in mismatch
    assert not list(out.iterdir())

    # (a) the right token in RAY_AUTH_TOKEN + --auth-mode token: the report comes back.
    with_token = {**head.env, "RAY_AUTH_TOKEN": head.token}
    proc = cli([*submit, "--auth-mode", "token"], with_token, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert head.token not in proc.stdout + proc.stderr
    report_path = Path(proc.stdout.strip().splitlines()[-1])
    assert report_path.parent == out
    assert "1,234" in report_path.read_text("utf-8")
    job_id = next(line for line in proc.stderr.splitlines() if line.startswith("job ")).split()[1]

    # The config/env route and a token file work too (RAY_AUTH_TOKEN_PATH, no --auth-mode).
    token_file = tmp_path / "token"
    token_file.write_text(head.token)
    by_config = {
        **head.env,
        "RAY_AUTH_TOKEN_PATH": str(token_file),
        "DEEP_RESEARCH_RAY__AUTH_MODE": "token",
    }
    status = cli(["jobs", "status", job_id, "--address", head.url], by_config, tmp_path)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["status"] == "SUCCEEDED"
    # Nothing was written to the (temporary) default token path by any of this.
    assert not (head.home / ".ray" / "auth_token").exists()
