"""The one configuration tree, read once in the driver and handed to actors as a frozen model.

Precedence, lowest first: ``config/default.yaml`` < user file (``--config`` or
``~/.config/deep-research/config.yaml``) < ``DEEP_RESEARCH_*`` env vars (nested with ``__``) < CLI
flags. Actors never read the environment themselves, so a cluster run sees exactly what the driver
validated. Provider API keys are not part of this tree: they come from their usual env vars only.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from deepresearch.config.files import default_data, user_data
from deepresearch.config.section import FsPath, Section
from deepresearch.config.trust import (
    FollowUpSettings,
    GateSettings,
    ScoringSettings,
    VerifySettings,
)
from deepresearch.errors import ConfigError

ENV_PREFIX = "DEEP_RESEARCH_"
_NOT_JSON = "not valid JSON (list and mapping values are JSON)"


class RunSettings(Section):
    mode: Literal["quick", "deep"] = "quick"
    max_query_chars: int = Field(2000, ge=10, le=100_000)
    output_dir: FsPath | None = None
    max_time_s: float = Field(1800.0, gt=0)
    checkpoints: bool = True
    format: Literal["md", "json", "html"] = "md"  # --format: the report file's format
    # fewer usable sources (read and cited by a relevant finding) than this: honest no-answer
    min_sources: int = Field(1, ge=0, le=100)


class ActorPlacement(Section):
    """Where one kind of actor may run: CPUs, custom resources and node labels it asks Ray for."""

    num_cpus: float | None = Field(None, ge=0)
    resources: dict[str, float] = Field(default_factory=dict)
    label_selector: dict[str, str] = Field(default_factory=dict)


class CrewSettings(Section):
    """The long-lived actors every run on a Ray cluster shares (``actors/crew.py``)."""

    name: str = Field("deep-research-crew", min_length=1, max_length=64, pattern=r"^[\w.-]+$")
    researchers: int = Field(2, ge=1, le=256)  # researcher actors; more on worker nodes: more runs
    concurrency: int = Field(16, ge=1, le=1024)  # sub-tasks one researcher actor serves at once
    hosts: int = Field(1, ge=1, le=64)  # actors holding runs' coordinators, URL pools, event logs
    max_restarts: int = Field(-1, ge=-1)  # a crew actor that dies is replaced (-1: always)
    detached: bool | None = None  # None: outlives the driver when it joined a cluster


def check_ray_address(value: str) -> str:
    """What ``ray.init`` can join: anything else (``ftp://x``, ``http://head:8265``, "") reaches
    Ray, which reads a scheme as a module name, or starts a local Ray instead of joining."""
    if value in ("auto", "local"):
        return value
    host, colon, port = value.removeprefix("ray://").rpartition(":")
    if value.startswith("ray://") and not colon:
        host, port = port, "10001"  # the Ray Client's own port
    target = host.strip("[]")
    if not target or "/" in target or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("not a Ray address: host:port, ray://host:port, auto or local")
    return value


class RaySettings(Section):
    address: str | None = None
    num_cpus: int = Field(2, ge=1)
    object_store_memory_mb: int = Field(256, ge=75)
    include_dashboard: bool = False
    auth_mode: Literal["disabled", "token"] = "disabled"
    job_python: str = Field("python", min_length=1)  # `submit`: the job's Python on the cluster
    connect_timeout_s: float = Field(30.0, gt=0, le=3600)  # joining an address gives up after this
    researcher: ActorPlacement = ActorPlacement()  # e.g. resources: {researcher_node: 1}
    evaluator: ActorPlacement = ActorPlacement()
    crew: CrewSettings = CrewSettings()

    @field_validator("address")
    @classmethod
    def _ray_address(cls, value: str | None) -> str | None:
        return None if value is None else check_ray_address(value)


class ModelPrice(Section):
    """USD per million tokens (example prices in default.yaml: check your provider's)."""

    input_per_mtok: float = Field(0.0, ge=0)
    output_per_mtok: float = Field(0.0, ge=0)


class LLMTier(Section):
    """One tier of a fallback chain; a string ``"provider"`` or ``"provider:model"`` also works."""

    provider: str
    model: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            provider, _, model = value.strip().partition(":")
            return {"provider": provider.strip(), "model": model.strip()}
        return value


LLMRoleName = Literal["planner", "researcher", "evaluator", "writer"]


class LLMRateLimit(Section):
    requests_per_minute: int | None = Field(None, ge=1)
    tokens_per_minute: int | None = Field(None, ge=1)


# The families of providers/llm/server_profiles.py and the task kinds of llm_messages.OUTPUT_CAPS
# (config imports neither; tests/unit/test_server_profiles.py checks that they agree).
ServerFamily = Literal[
    "auto", "llama-cpp-python", "llama.cpp", "ollama", "vllm", "lm-studio", "openai", "generic"
]
TaskKind = Literal["queries", "intent", "plan", "evaluate", "findings", "write", "rewrite"]


class LLMSettings(Section):
    provider: str = "extractive"
    model: str = ""
    context_window: int = Field(32000, ge=1000)
    context_share: float = Field(0.55, gt=0, le=1)
    chars_per_token: float = Field(4.0, gt=0)
    # OpenAI-compatible server family (providers/llm/server_profiles.py), or auto: detected
    server: ServerFamily = "auto"
    stream: Literal["auto", "on", "off"] = "auto"
    max_output_tokens: dict[TaskKind, int] = Field(default_factory=dict)  # llm_messages.OUTPUT_CAPS
    roles: dict[LLMRoleName, LLMTier] = Field(default_factory=dict)
    fallback: tuple[LLMTier, ...] | None = None  # unset: [extractive] behind a model
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    max_cost_usd: float | None = Field(None, gt=0)
    rate_limits: dict[str, LLMRateLimit] = Field(default_factory=dict)  # per provider, run-wide
    timeout_s: float = Field(120.0, gt=0)
    breaker: BreakerSettings = Field(default_factory=lambda: BreakerSettings())
    retry: RetrySettings = Field(default_factory=lambda: RetrySettings())

    @field_validator("stream", mode="before")
    @classmethod
    def _stream_word(cls, value: Any) -> Any:
        if isinstance(value, bool):  # YAML reads a bare on/off as a boolean
            return "on" if value else "off"
        return value

    @field_validator("fallback", mode="before")
    @classmethod
    def _split_fallback(cls, value: Any) -> Any:
        """``"a:m, b"`` is a chain too; a value that opens like JSON must be JSON (the env source
        hands an optional list's undecodable value over as a plain string)."""
        if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
            try:
                return json.loads(value)
            except ValueError:
                raise ValueError(_NOT_JSON) from None
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        return value


class BreakerSettings(Section):
    failure_threshold: int = Field(5, ge=1)
    reset_timeout_s: float = Field(30.0, gt=0)
    half_open_max_calls: int = Field(1, ge=1)


class RetrySettings(Section):
    attempts: int = Field(3, ge=1, le=10)
    base_delay_s: float = Field(0.25, ge=0)
    max_delay_s: float = Field(8.0, ge=0)
    retry_after_cap_s: float = Field(30.0, ge=0)


class SearchSettings(Section):
    providers: tuple[str, ...] = ()
    hits_per_query: int = Field(8, ge=1, le=100)
    breaker: BreakerSettings = BreakerSettings()
    retry: RetrySettings = RetrySettings()
    code_dir: FsPath | None = None  # --code DIR: the folder the ``grep`` provider searches
    timeout_s: float = Field(20.0, gt=0)  # per web search request
    stackexchange_site: str = "stackoverflow"
    # requests per minute per provider (a leaky bucket in the gateway); unlisted: no limit
    rate_limits: dict[str, float] = Field(default_factory=dict)

    @field_validator("rate_limits")
    @classmethod
    def _positive_rates(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [name for name, per_minute in value.items() if per_minute <= 0]
        if bad:
            raise ValueError(f"must be a positive number of requests per minute ({bad[0]})")
        return value

    @field_validator("providers", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        return value


class CorpusSettings(Section):
    path: FsPath | None = None
    cache_dir: FsPath | None = None
    passage_chars: int = Field(1000, ge=200, le=20_000)
    extract_workers: int = Field(2, ge=1, le=64)
    extract_timeout_s: float = Field(120.0, gt=0)
    extract_memory_mb: int = Field(2048, ge=128)


class ResearcherSettings(Section):
    tool_budget: int = Field(10, ge=1)
    queries: int = Field(4, ge=1, le=20)
    batch_sizes: tuple[int, ...] = (3, 2, 3)
    max_sources: int = Field(8, ge=1, le=100)
    max_findings: int = Field(24, ge=1, le=100)
    report_cap_chars: int = Field(50_000, ge=1000)
    max_steps: int = Field(40, ge=1)
    max_time_s: float = Field(300.0, gt=0)


class DeepSettings(Section):
    max_parallel: int = Field(3, ge=1, le=64)
    target_rounds: int = Field(1, ge=1, le=20)
    researchers_by_complexity: tuple[int, int, int] = (2, 3, 5)


class WebSettings(Section):
    """The safe web fetcher (DESIGN §8); ``allow_private_urls`` is ``--allow-private-urls``."""

    allow_private_urls: bool = False
    timeout_s: float = Field(30.0, gt=0)
    max_redirects: int = Field(5, ge=0, le=20)
    max_raw_bytes: int = Field(10_000_000, ge=1024)
    max_decoded_bytes: int = Field(20_000_000, ge=1024)
    respect_robots: bool = True
    per_host_concurrency: int = Field(2, ge=1, le=64)
    per_host_delay_s: float = Field(0.25, ge=0)
    user_agent: str = (
        "Mozilla/5.0 (compatible; ray-deep-research/0.1; +https://github.com/ray-deep-research)"
    )
    extract_workers: int = Field(2, ge=1, le=64)
    extract_timeout_s: float = Field(30.0, gt=0)
    extract_memory_mb: int = Field(1024, ge=128)


class SimulateSettings(Section):
    """Injected provider latency for benchmarks and tests (``providers/assembly/simulated_latency.py``)."""

    latency_s: float = Field(0.0, ge=0, le=60)
    latency_mode: Literal["floor", "added"] = "floor"


class ServiceSettings(Section):
    """``deep-research serve`` (and MCP's corpus check): what clients may ask for and how much."""

    max_runs: int = Field(16, ge=1, le=256)
    heartbeat_s: float = Field(10.0, gt=0)
    retry_after_s: int = Field(10, ge=1)
    corpus_roots: tuple[FsPath, ...] = ()  # a client's corpus must lie under one; none: refused
    allowed_hosts: tuple[str, ...] = ()  # Host names answered besides loopback and the bound one
    output_dir: FsPath | None = None  # reports of service runs; default: <state_dir>/reports
    max_connections: int = Field(256, ge=1, le=65_536)
    request_timeout_s: float = Field(30.0, gt=0)  # headers, then a body, must arrive this fast
    prepare_timeout_s: float = Field(300.0, gt=0)  # checking input and indexing the corpus
    deadline_grace_s: float = Field(120.0, ge=0)  # past run.max_time_s a run is abandoned


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        extra="forbid", frozen=True, env_prefix=ENV_PREFIX, env_nested_delimiter="__"
    )

    state_dir: FsPath | None = None
    run: RunSettings = RunSettings()
    ray: RaySettings = RaySettings()
    llm: LLMSettings = LLMSettings()
    search: SearchSettings = SearchSettings()
    corpus: CorpusSettings = CorpusSettings()
    researcher: ResearcherSettings = ResearcherSettings()
    deep: DeepSettings = DeepSettings()
    simulate: SimulateSettings = SimulateSettings()
    service: ServiceSettings = ServiceSettings()
    web: WebSettings = WebSettings()
    follow_up: FollowUpSettings = FollowUpSettings()
    gate: GateSettings = GateSettings()
    verify: VerifySettings = VerifySettings()
    scoring: ScoringSettings = ScoringSettings()

    def resolved_state_dir(self) -> Path:
        return (self.state_dir or Path("~/.local/state/deep-research")).expanduser()

    def resolved_cache_dir(self) -> Path:
        return (self.corpus.cache_dir or Path("~/.cache/deep-research/index")).expanduser()


class _MappingSource(PydanticBaseSettingsSource):
    """A fixed mapping (one YAML file) as a settings source."""

    def __init__(self, settings_cls: type[BaseSettings], data: Mapping[str, Any]) -> None:
        super().__init__(settings_cls)
        self._data = dict(data)

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._data)


def _format(exc: ValidationError) -> ConfigError:
    first = exc.errors()[0]
    key = ".".join(str(p) for p in first["loc"]) or "config"
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown setting"
    elif "input" in first and not isinstance(first["input"], dict | list):
        msg = f"{msg} (got {first['input']!r})"
    return ConfigError(key, msg)


def load_settings(
    config_file: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Build and validate the tree once; every problem becomes a one-line ``ConfigError``."""
    default = default_data()
    user = user_data(config_file)
    environ = dict(os.environ if env is None else env)

    class _Loaded(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            env_source = EnvSettingsSource(
                settings_cls,
                env_prefix=ENV_PREFIX,
                env_nested_delimiter="__",
                case_sensitive=False,
            )
            env_source.env_vars = {k.lower(): v for k, v in environ.items()}  # injected env
            return (
                InitSettingsSource(settings_cls, init_kwargs=dict(overrides or {})),
                env_source,
                _MappingSource(settings_cls, user),
                _MappingSource(settings_cls, default),
            )

    _check_env_keys(environ)
    try:
        loaded = _Loaded()
    except ValidationError as exc:
        raise _bad_json_env(environ) or _format(exc) from None
    except SettingsError as exc:  # an env value that should be JSON (a list or mapping) is not
        raise _bad_json_env(environ) or _unparsed_env(exc) from None
    except RecursionError:
        raise ConfigError("config", "settings nested too deeply") from None
    return Settings.model_validate(loaded.model_dump())


def _bad_json_env(environ: Mapping[str, str]) -> ConfigError | None:
    """Name the variable whose value opens like JSON (a list or mapping) but is not JSON."""
    for key, value in environ.items():
        if key.upper().startswith(ENV_PREFIX) and value.strip()[:1] in ("[", "{"):
            with contextlib.suppress(ValueError):
                json.loads(value)
                continue
            return ConfigError(key, _NOT_JSON)
    return None


def _unparsed_env(exc: SettingsError) -> ConfigError:
    return ConfigError("environment", f"{' '.join(str(exc).split())[:200]}: {_NOT_JSON}")


def _check_env_keys(environ: Mapping[str, str]) -> None:
    """Unknown ``DEEP_RESEARCH_*`` variables are errors, like unknown keys in a file."""
    top = {name.upper() for name in Settings.model_fields}
    for key in environ:
        if not key.upper().startswith(ENV_PREFIX):
            continue
        rest = key.upper()[len(ENV_PREFIX) :]
        head = rest.split("__", 1)[0]
        if head not in top and rest not in _EXTRA_ENV:
            raise ConfigError(key, "unknown setting")


# Env vars with our prefix that are not settings (read by tests or the CLI itself).
_EXTRA_ENV = frozenset({"API_TOKEN", "TEST_ALLOW_PRIVATE", "DEBUG"})


def overrides_from_flags(flags: Mapping[str, Any]) -> dict[str, Any]:
    """Turn ``{"llm.provider": "x", "run.mode": None}`` into a nested dict, dropping unset flags."""
    nested: dict[str, Any] = {}
    for dotted, value in flags.items():
        if value is None:
            continue
        node = nested
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested
