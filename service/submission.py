"""What a client may ask for in ``POST /runs``, and how that becomes a validated ``Settings``.

The body is checked by a strict pydantic model (unknown fields are errors), then merged over the
service's own settings and validated again as a whole tree, so a client can only tighten or pick
among options the CLI also offers; where reports are written and the state directory stay the
operator's choice, and a corpus must lie under the operator's ``service.corpus_roots``. Types are
strict: ``"3"`` is not a number and ``Infinity`` or ``NaN`` is not a limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from deepresearch.config.settings import Settings
from deepresearch.errors import ConfigError, QueryGated
from deepresearch.service.corpus_roots import check_corpus


class RunCreate(BaseModel):
    """The JSON body of ``POST /runs``; every option mirrors a ``deep-research run`` flag."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    query: str = Field(min_length=1, max_length=100_000)
    mode: Literal["quick", "deep"] | None = None
    corpus: str | None = Field(None, min_length=1, max_length=4096)
    llm: str | None = Field(None, min_length=1, max_length=64)
    model: str | None = Field(None, max_length=200)
    search: str | None = Field(None, min_length=1, max_length=200)
    max_parallel: int | None = Field(None, ge=1, le=64)
    max_time_s: float | None = Field(None, gt=0, le=86_400)
    max_cost_usd: float | None = Field(None, gt=0)
    format: Literal["md", "json", "html"] | None = None  # the report file's format (--format)

    @field_validator("corpus")
    @classmethod
    def _a_possible_path(cls, value: str | None) -> str | None:
        """A NUL byte is in no file name (every os call would raise ValueError on it)."""
        if value is not None and "\x00" in value:
            raise ValueError("a path cannot contain a NUL byte")
        return value

    @field_validator("format", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        """``"HTML"`` means ``"html"``, as on the command line; anything else is checked as is."""
        return value.strip().lower() if isinstance(value, str) else value


def overrides(body: RunCreate) -> dict[str, Any]:
    """The nested settings the body sets (unset options are left to the service's settings)."""
    flat: dict[str, Any] = {
        "run.mode": body.mode,
        "corpus.path": Path(body.corpus) if body.corpus is not None else None,
        "llm.provider": body.llm,
        "llm.model": body.model,
        "search.providers": body.search,
        "deep.max_parallel": body.max_parallel,
        "run.max_time_s": body.max_time_s,
        "llm.max_cost_usd": body.max_cost_usd,
        "run.format": body.format,
    }
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        if value is None:
            continue
        section, leaf = dotted.split(".")
        nested.setdefault(section, {})[leaf] = value
    return nested


def settings_for(base: Settings, body: RunCreate) -> Settings:
    """``base`` with the body's options applied, validated as one tree (ConfigError on a bad value,
    CorpusRefused for a corpus outside the roots)."""
    data = base.model_dump()
    chosen = overrides(body)
    if body.corpus is not None:
        chosen["corpus"]["path"] = check_corpus(body.corpus, base.service.corpus_roots)
    for section, values in chosen.items():
        data[section] = {**data[section], **values}
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "settings"
        raise ConfigError(key, first["msg"]) from None


def describe_errors(exc: ValidationError) -> list[dict[str, str]]:
    """A pydantic error list a client can show: which field, and what is wrong with it."""
    out = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or "body"
        message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
        out.append({"field": field, "message": message})
    return out


def gated_body(gated: QueryGated, query: str) -> dict[str, Any]:
    """``POST /runs``'s answer (200, no run started) when the intent gate answered the query:
    ``{"status": "gated", "outcome", "reply", ...}``, as ``deep-research run --json`` prints."""
    from deepresearch.run.intent_gate import gate_summary

    return gate_summary(gated, query).model_dump(mode="json")
