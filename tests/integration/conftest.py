"""One local Ray for the whole integration tier (starting Ray costs seconds, so it is shared)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepresearch.config.settings import Settings, load_settings, overrides_from_flags


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    import ray

    os.environ["RAY_AUTH_MODE"] = "disabled"
    # address="local": always a Ray of our own, never one a `ray start --head` on this machine
    # left behind (joining it refuses num_cpus, and would run the tests on someone else's Ray).
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=200 * 1024 * 1024,
        log_to_driver=False,
        namespace="deep-research-tests",
    )
    yield
    ray.shutdown()


@pytest.fixture()
def make_settings(tmp_path: Path) -> object:
    def make(corpus: Path, **flags: object) -> Settings:
        base: dict[str, object] = {
            "corpus.path": corpus,
            "corpus.cache_dir": tmp_path / "cache",
            "state_dir": tmp_path / "state",
            "run.output_dir": tmp_path / "out",
        }
        base.update(flags)
        (tmp_path / "out").mkdir(exist_ok=True)
        return load_settings(None, overrides_from_flags(base), env={})

    return make
