"""Settings for runs on the loopback fakes (``FakeSearxng``, ``FakeWeb``), shared by the tests
that search and fetch over HTTP. A module of its own, not conftest (see ``pdf_layout``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from deepresearch.config.settings import Settings, load_settings, overrides_from_flags


def web_settings(tmp_path: Path, flags: Mapping[str, object]) -> Settings:
    """SearXNG search, private URLs allowed (the fakes are on loopback), no per-host delay,
    state and reports under ``tmp_path``; ``flags`` adds a test's own ("researcher.queries")."""
    (tmp_path / "out").mkdir(exist_ok=True)
    base: dict[str, object] = {
        "search.providers": "searxng",
        "web.allow_private_urls": True,
        "web.per_host_delay_s": 0.0,
        "state_dir": tmp_path / "state",
        "run.output_dir": tmp_path / "out",
        **flags,
    }
    return load_settings(None, overrides_from_flags(base), env={})
