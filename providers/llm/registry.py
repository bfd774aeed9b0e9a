"""Build an LLM provider by its config name, importing only the one that is used.

Lazy imports keep startup fast and let a machine without a vendor SDK still run the model-free
``extractive`` provider. ``scripted`` is deliberately absent: fakes are built by tests, not config.
"""

from __future__ import annotations

from deepresearch.errors import ConfigError
from deepresearch.providers.llm.base import LLMProvider

KNOWN_LLM_PROVIDERS: tuple[str, ...] = ("extractive",)


def build_llm(name: str, model: str = "") -> LLMProvider:
    """The provider called ``name``; ``model`` overrides its default model where it has one."""
    key = name.strip().lower()
    if key == "extractive":
        from deepresearch.providers.llm.extractive import ExtractiveLLM

        return ExtractiveLLM(model=model or "extractive-v1")
    known = ", ".join(KNOWN_LLM_PROVIDERS)
    raise ConfigError("llm.provider", f"unknown provider {name!r} (known: {known})")


__all__ = ["KNOWN_LLM_PROVIDERS", "build_llm"]
