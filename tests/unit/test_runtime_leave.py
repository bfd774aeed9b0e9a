"""A CLI command that joined a cluster ends its connection itself before exiting: left to Ray's
exit hook, the connection is ended only after a half-second sleep (for driver logs this process
never forwards), which every ``run --address`` paid. A Ray this process did not join is left
alone. Ray itself is faked here (unit tests never start it)."""

from __future__ import annotations

import pytest

from deepresearch import cli
from deepresearch.cluster import runtime
from deepresearch.config.settings import load_settings


class FakeRay:
    """``ray.init`` / ``is_initialized`` / ``shutdown`` as this process sees them."""

    def __init__(self, initialized: bool = False) -> None:
        self.initialized = initialized
        self.shutdowns = 0

    def init(self, **_kwargs: object) -> None:
        self.initialized = True

    def is_initialized(self) -> bool:
        return self.initialized

    def shutdown(self) -> None:
        self.initialized = False
        self.shutdowns += 1


@pytest.fixture()
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> FakeRay:
    fake = FakeRay()
    for name in ("init", "is_initialized", "shutdown"):
        monkeypatch.setattr(runtime.ray, name, getattr(fake, name))
    monkeypatch.setattr(runtime, "probe", lambda address, timeout_s: None)
    monkeypatch.setattr(runtime, "set_auth_mode", lambda mode: None)
    monkeypatch.setattr(runtime, "_joined", set())
    return fake


def test_a_joined_cluster_is_left_once_and_not_by_disconnect(fake_ray: FakeRay) -> None:
    settings = load_settings(None, {"ray": {"address": "127.0.0.1:6379"}}, env={}).ray
    connection = runtime.connect(settings)
    runtime.disconnect(connection)  # a service keeps its connection for its next run
    assert fake_ray.initialized and fake_ray.shutdowns == 0
    runtime.leave()
    assert not fake_ray.initialized and fake_ray.shutdowns == 1
    runtime.leave()
    assert fake_ray.shutdowns == 1


def test_a_ray_this_process_did_not_join_is_not_ended(fake_ray: FakeRay) -> None:
    fake_ray.initialized = True  # a test's or an embedding program's own Ray
    settings = load_settings(None, {"ray": {"address": "127.0.0.1:6379"}}, env={}).ray
    assert runtime.connect(settings).address == "existing"
    runtime.leave()
    assert fake_ray.initialized and fake_ray.shutdowns == 0


def test_the_cli_leaves_before_it_exits_even_on_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    left: list[bool] = []
    monkeypatch.setattr(runtime, "leave", lambda: left.append(True))
    with pytest.raises(SystemExit) as exited:
        cli.main(["run", "--no-such-option", "a query"])
    assert exited.value.code == 2 and left == [True]
    assert "no-such-option" in capsys.readouterr().err
