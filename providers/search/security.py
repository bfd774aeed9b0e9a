"""One ``security`` provider fanning out to OSV, NVD, GitHub Advisories and CISA KEV.

The four sources answer different questions (which packages, how severe, what GitHub knows, is
it exploited in the wild) and fail independently, so they are asked concurrently and whatever
answered is merged (reciprocal-rank fusion, each URL once); the provider only fails when every
source failed. What each source can do:

- OSV has no free-text search (``/v1/query`` needs a package or commit), so it is asked only for
  the advisory ids the query names (``GET /v1/vulns/{id}``: CVE, GHSA, PYSEC, GO, RUSTSEC ...).
- NVD's CVE API 2.0: ``cveId`` for named CVEs, ``keywordSearch`` otherwise.
- GitHub's global advisories (``/advisories``) filter by ``cve_id``/``ghsa_id`` only: ids only.
- CISA KEV is one JSON feed: downloaded once per ``kev_ttl_s`` and filtered here.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.policies.search.merge import merge_hits
from deepresearch.providers.search.transport import (
    DEFAULT_TIMEOUT_S,
    Clock,
    dict_items,
    json_dict,
    json_of,
    ranked_hits,
    request,
    text_field,
)
from deepresearch.schemas import SearchHit
from deepresearch.text.terms import STOPWORDS

NAME = "security"
_CVE = re.compile(r"\bCVE-\d{4}-\d{4,}\b", re.IGNORECASE)
_GHSA = re.compile(r"\bGHSA(?:-[23456789cfghjmpqrvwx]{4}){3}\b", re.IGNORECASE)
_OTHER = re.compile(r"\b(?:PYSEC|GO|RUSTSEC|OSV|GSD|MAL)-\d{4}-[\w-]+\b", re.IGNORECASE)
_TERM = re.compile(r"[a-z0-9][a-z0-9._+-]{2,}")
_ADVISORY_QUERY_STOPWORDS = STOPWORDS | {"vulnerability"}
MAX_IDS = 5
KEV_URL = "https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json"
Triples = list[tuple[str, str, str]]


def advisory_ids(query: str) -> list[str]:
    """Advisory ids named in ``query``, in order, canonical case (``GHSA-`` ids lower after it)."""
    found: list[str] = []
    for match in re.finditer(f"{_CVE.pattern}|{_GHSA.pattern}|{_OTHER.pattern}", query, re.I):
        raw = match.group(0)
        ident = "GHSA" + raw[4:].lower() if raw.upper().startswith("GHSA") else raw.upper()
        if ident not in found:
            found.append(ident)
    return found[:MAX_IDS]


def _cvss(cve: dict[str, Any]) -> str:
    metrics = cve.get("metrics")
    if not isinstance(metrics, dict):
        return ""
    for key in ("cvssMetricV40", "cvssMetricV31", "cvssMetricV30", "cvssMetricV2"):
        entries = metrics.get(key)
        if isinstance(entries, list) and entries and isinstance(entries[0], dict):
            data = entries[0].get("cvssData") or {}
            score, severity = data.get("baseScore"), data.get("baseSeverity") or ""
            if score is not None:
                return f"CVSS {score} {severity}".strip()
    return ""


class SecuritySearch:
    """``SearchProvider`` over four vulnerability sources; ``last_failures`` names the ones that
    failed in the latest search (the gateway can show a partial answer)."""

    name = NAME

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        github_token: SecretStr | None = None,
        nvd_api_key: SecretStr | None = None,
        osv_url: str = "https://api.osv.dev",
        nvd_url: str = "https://services.nvd.nist.gov",
        github_url: str = "https://api.github.com",
        kev_url: str = KEV_URL,
        kev_ttl_s: float = 6 * 3600.0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clock: Clock = time.time,
    ) -> None:
        self._client = client
        self._github_token = github_token
        self._nvd_key = nvd_api_key
        self._urls = {
            "osv": osv_url.rstrip("/"),
            "nvd": nvd_url.rstrip("/"),
            "github": github_url.rstrip("/"),
        }
        self._kev_url = kev_url
        self._kev_ttl_s = kev_ttl_s
        self._timeout_s = timeout_s
        self._clock = clock
        self._kev: tuple[float, list[dict[str, Any]]] | None = None
        self._kev_lock = asyncio.Lock()
        self.last_failures: tuple[str, ...] = ()

    def _secrets(self) -> list[str]:
        keys = (self._github_token, self._nvd_key)
        return [k.get_secret_value() for k in keys if k is not None]

    async def _get(
        self,
        source: str,
        url: str,
        params: dict[str, str | int] | None = None,
        headers: dict[str, str] | None = None,
        ok: tuple[int, ...] = (),
    ) -> httpx.Response:
        return await request(
            self._client,
            f"{NAME}/{source}",
            "GET",
            url,
            params=params,
            headers={"Accept": "application/json", **(headers or {})},
            secrets=self._secrets(),
            timeout_s=self._timeout_s,
            clock=self._clock,
            ok_statuses=ok,
        )

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        ids = advisory_ids(query)
        sources: dict[str, Callable[[], Awaitable[Triples]]] = {
            "nvd": lambda: self._nvd(query, ids, limit),
            "kev": lambda: self._kev_hits(query, ids, limit),
        }
        if ids:
            sources = {
                "osv": lambda: self._osv(ids),
                **sources,
                "github": lambda: self._github(ids, limit),
            }
        outcomes = await asyncio.gather(
            *(run() for run in sources.values()), return_exceptions=True
        )
        lists: list[list[SearchHit]] = []
        failures: list[tuple[str, ProviderError]] = []
        for source, outcome in zip(sources, outcomes, strict=True):
            if isinstance(outcome, ProviderError):
                failures.append((source, outcome))
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                lists.append(ranked_hits(NAME, outcome, limit))
        self.last_failures = tuple(f"{s}: {e.reason}" for s, e in failures)
        if failures and len(failures) == len(sources):
            raise _combined(failures)
        return merge_hits(lists, limit)

    # ------------------------------------------------------------------ sources

    async def _osv(self, ids: list[str]) -> Triples:
        async def one(ident: str) -> tuple[str, str, str] | None:
            response = await self._get("osv", f"{self._urls['osv']}/v1/vulns/{ident}", ok=(404,))
            if response.status_code == 404:
                return None
            vuln = json_dict(f"{NAME}/osv", response)
            vid = text_field(vuln, "id") or ident
            packages = [
                f"{p['package'].get('ecosystem', '')}/{p['package'].get('name', '')}"
                for p in dict_items(f"{NAME}/osv", vuln.get("affected"), "affected")
                if isinstance(p.get("package"), dict)
            ]
            affected = f" Affects: {', '.join(packages[:5])}." if packages else ""
            details = text_field(vuln, "details", "summary")
            title = f"{vid}: {text_field(vuln, 'summary') or 'advisory'}"
            return (f"https://osv.dev/vulnerability/{vid}", title, details + affected)

        found = await asyncio.gather(*(one(i) for i in ids))
        return [f for f in found if f is not None]

    async def _nvd(self, query: str, ids: list[str], limit: int) -> Triples:
        headers = {"apiKey": self._nvd_key.get_secret_value()} if self._nvd_key else {}
        base = f"{self._urls['nvd']}/rest/json/cves/2.0"
        cves = [i for i in ids if i.startswith("CVE-")]
        requests: list[dict[str, str | int]]
        if cves:
            requests = [{"cveId": c} for c in cves]
        else:
            words = re.sub(r"[\"'()]", " ", query).split()
            requests = [{"keywordSearch": " ".join(words), "resultsPerPage": min(limit, 50)}]
        responses = await asyncio.gather(*(self._get("nvd", base, p, headers) for p in requests))
        found: Triples = []
        for response in responses:
            data = json_dict(f"{NAME}/nvd", response)
            for item in dict_items(f"{NAME}/nvd", data.get("vulnerabilities"), "vulnerabilities"):
                cve = item.get("cve")
                if not isinstance(cve, dict) or not text_field(cve, "id"):
                    continue
                cid = text_field(cve, "id")
                descriptions = dict_items(f"{NAME}/nvd", cve.get("descriptions"), "descriptions")
                english = [d for d in descriptions if d.get("lang") == "en"] or descriptions
                text = text_field(english[0], "value") if english else ""
                facts = ", ".join(f for f in (_cvss(cve), text_field(cve, "published")[:10]) if f)
                snippet = f"[{facts}] {text}" if facts else text
                found.append((f"https://nvd.nist.gov/vuln/detail/{cid}", f"{cid} (NVD)", snippet))
        return found

    async def _github(self, ids: list[str], limit: int) -> Triples:
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        if self._github_token is not None:
            headers["Authorization"] = f"Bearer {self._github_token.get_secret_value()}"
        url = f"{self._urls['github']}/advisories"

        async def one(ident: str) -> Triples:
            key = "ghsa_id" if ident.startswith("GHSA") else "cve_id"
            if key == "cve_id" and not ident.startswith("CVE-"):
                return []
            params: dict[str, str | int] = {key: ident, "per_page": min(limit, 100)}
            response = await self._get("github", url, params, headers, ok=(403,))
            if response.status_code == 403:
                raise self._github_forbidden(response)
            items = dict_items(f"{NAME}/github", json_of(f"{NAME}/github", response), "advisories")
            return [
                (
                    text_field(a, "html_url"),
                    f"{text_field(a, 'ghsa_id')}: {text_field(a, 'summary')}",
                    f"[{text_field(a, 'severity') or 'unknown'} severity"
                    f"{', ' + text_field(a, 'cve_id') if text_field(a, 'cve_id') else ''}] "
                    + text_field(a, "description"),
                )
                for a in items
            ]

        found = await asyncio.gather(*(one(i) for i in ids))
        return [t for triples in found for t in triples]

    def _github_forbidden(self, response: httpx.Response) -> ProviderError:
        if response.headers.get("x-ratelimit-remaining") == "0":
            reset = response.headers.get("x-ratelimit-reset", "")
            wait = max(0.0, float(reset) - self._clock()) if reset.isdigit() else None
            return RateLimited(f"{NAME}/github", wait)
        return ProviderError(f"{NAME}/github", "HTTP 403", False)

    async def _kev_catalog(self) -> list[dict[str, Any]]:
        async with self._kev_lock:
            now = self._clock()
            if self._kev is not None and now - self._kev[0] < self._kev_ttl_s:
                return self._kev[1]
            response = await self._get("kev", self._kev_url)
            data = json_dict(f"{NAME}/kev", response)
            entries = dict_items(f"{NAME}/kev", data.get("vulnerabilities"), "vulnerabilities")
            self._kev = (now, entries)
            return entries

    async def _kev_hits(self, query: str, ids: list[str], limit: int) -> Triples:
        entries = await self._kev_catalog()
        if ids:
            wanted = set(ids)
            chosen = [e for e in entries if text_field(e, "cveID").upper() in wanted]
        else:
            chosen = kev_matches(entries, query)
        return [
            (
                "https://www.cisa.gov/known-exploited-vulnerabilities-catalog"
                f"?search_api_fulltext={text_field(e, 'cveID')}",
                f"{text_field(e, 'cveID')}: {text_field(e, 'vulnerabilityName')} (CISA KEV)",
                f"Known exploited in the wild (CISA KEV, added {text_field(e, 'dateAdded')}); "
                f"{text_field(e, 'vendorProject')} {text_field(e, 'product')}. "
                f"{text_field(e, 'shortDescription')} "
                f"Required action: {text_field(e, 'requiredAction')}",
            )
            for e in chosen[:limit]
        ]


def kev_matches(entries: list[dict[str, Any]], query: str) -> list[dict[str, Any]]:
    """Catalog entries matching at least half of the query's terms, best then newest first."""
    terms = {t for t in _TERM.findall(query.lower()) if t not in _ADVISORY_QUERY_STOPWORDS}
    if not terms:
        return []
    needed = max(1, math.ceil(len(terms) / 2))
    scored: list[tuple[int, str, dict[str, Any]]] = []
    for entry in entries:
        haystack = " ".join(
            text_field(entry, k).lower()
            for k in ("cveID", "vendorProject", "product", "vulnerabilityName", "shortDescription")
        )
        score = sum(1 for t in terms if t in haystack)
        if score >= needed:
            scored.append((score, text_field(entry, "dateAdded"), entry))
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    return [entry for _, _, entry in scored]


def _combined(failures: list[tuple[str, ProviderError]]) -> ProviderError:
    """Every source failed: rate limited if all were, else retryable if any was."""
    reasons = "; ".join(f"{source}: {exc.reason}" for source, exc in failures)
    waits = [e.retry_after_s for _, e in failures if e.retry_after_s is not None]
    if all(isinstance(e, RateLimited) for _, e in failures):
        return RateLimited(NAME, min(waits) if waits else None)
    retryable = any(e.retryable for _, e in failures)
    return ProviderError(
        NAME, f"all sources failed ({reasons})", retryable, min(waits, default=None)
    )
