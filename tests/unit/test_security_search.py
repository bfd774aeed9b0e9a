"""The security provider's fan-out (OSV, NVD, GitHub, CISA KEV) over one httpx.MockTransport."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.providers.search.security import SecuritySearch, advisory_ids, kev_matches

TOKEN = "ghp_SECRETTOKEN0123456789"
NOW = 1_700_000_000.0

KEV = {
    "vulnerabilities": [
        {
            "cveID": "CVE-2021-44228",
            "vendorProject": "Apache",
            "product": "Log4j2",
            "vulnerabilityName": "Apache Log4j2 Remote Code Execution Vulnerability",
            "dateAdded": "2021-12-10",
            "shortDescription": "JNDI features do not protect against attacker-controlled LDAP.",
            "requiredAction": "Apply updates.",
        },
        {
            "cveID": "CVE-2023-0001",
            "vendorProject": "Acme",
            "product": "Widget",
            "vulnerabilityName": "Acme Widget Buffer Overflow",
            "dateAdded": "2023-02-01",
            "shortDescription": "Overflow in widget parser.",
            "requiredAction": "Patch.",
        },
    ]
}
NVD = {
    "vulnerabilities": [
        {
            "cve": {
                "id": "CVE-2021-44228",
                "published": "2021-12-10T10:15:09.143",
                "descriptions": [
                    {"lang": "es", "value": "no"},
                    {"lang": "en", "value": "Apache Log4j2 JNDI features..."},
                ],
                "metrics": {
                    "cvssMetricV31": [{"cvssData": {"baseScore": 10.0, "baseSeverity": "CRITICAL"}}]
                },
            }
        }
    ]
}
OSV = {
    "id": "GHSA-jfh8-c2jp-5v3q",
    "summary": "Remote code injection in Log4j",
    "details": "Log4j2 JNDI lookups allow RCE.",
    "affected": [
        {"package": {"ecosystem": "Maven", "name": "org.apache.logging.log4j:log4j-core"}}
    ],
}
GITHUB = [
    {
        "ghsa_id": "GHSA-jfh8-c2jp-5v3q",
        "cve_id": "CVE-2021-44228",
        "html_url": "https://github.com/advisories/GHSA-jfh8-c2jp-5v3q",
        "summary": "Remote code injection in Log4j",
        "description": "Log4j versions prior to 2.15.0 ...",
        "severity": "critical",
    }
]


class FakeSources:
    """Routes each source's request; ``broken`` names sources answering 500."""

    def __init__(self, broken: frozenset[str] = frozenset()) -> None:
        self.broken = broken
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        host = request.url.host
        source = {"osv.test": "osv", "nvd.test": "nvd", "gh.test": "github", "kev.test": "kev"}[
            host
        ]
        if source in self.broken:
            return httpx.Response(500, text=f"down {TOKEN}")
        if source == "osv":
            if request.url.path.endswith("/CVE-2021-44228"):
                return httpx.Response(404, json={"code": 5, "message": "Bug not found."})
            return httpx.Response(200, json=OSV)
        if source == "nvd":
            return httpx.Response(200, json=NVD)
        if source == "github":
            return httpx.Response(200, json=GITHUB)
        return httpx.Response(200, content=json.dumps(KEV).encode())

    def hosts(self) -> list[str]:
        return [r.url.host for r in self.requests]


@pytest.fixture
async def make() -> AsyncIterator[Callable[[FakeSources], SecuritySearch]]:
    clients: list[httpx.AsyncClient] = []

    def build(sources: FakeSources) -> SecuritySearch:
        client = httpx.AsyncClient(transport=httpx.MockTransport(sources))
        clients.append(client)
        return SecuritySearch(
            client,
            github_token=SecretStr(TOKEN),
            osv_url="https://osv.test",
            nvd_url="https://nvd.test",
            github_url="https://gh.test",
            kev_url="https://kev.test/kev.json",
            clock=lambda: NOW,
        )

    yield build
    for client in clients:
        await client.aclose()


def test_advisory_ids() -> None:
    query = "cve-2021-44228 vs GHSA-JFH8-C2JP-5V3Q and PYSEC-2021-19, again CVE-2021-44228"
    assert advisory_ids(query) == ["CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q", "PYSEC-2021-19"]
    assert advisory_ids("log4j remote code execution") == []


def test_kev_matches_needs_half_the_terms() -> None:
    entries = KEV["vulnerabilities"]
    assert [e["cveID"] for e in kev_matches(entries, "log4j2 remote code")] == ["CVE-2021-44228"]
    assert kev_matches(entries, "totally unrelated words here") == []
    assert kev_matches(entries, "the and") == []


async def test_ids_fan_out_to_all_four_sources(make: Any) -> None:
    sources = FakeSources()
    provider = make(sources)
    hits = await provider.search("CVE-2021-44228 GHSA-jfh8-c2jp-5v3q", 10)
    assert set(sources.hosts()) == {"osv.test", "nvd.test", "gh.test", "kev.test"}
    urls = [h.url for h in hits]
    assert "https://osv.dev/vulnerability/GHSA-jfh8-c2jp-5v3q" in urls
    assert "https://nvd.nist.gov/vuln/detail/CVE-2021-44228" in urls
    assert "https://github.com/advisories/GHSA-jfh8-c2jp-5v3q" in urls
    assert any("known-exploited" in u for u in urls)
    assert len(urls) == len(set(urls)) == 4
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert all(h.provider == "security" for h in hits)
    nvd = next(h for h in hits if "nvd" in h.url)
    assert nvd.snippet.startswith("[CVSS 10.0 CRITICAL, 2021-12-10] Apache Log4j2")
    gh = [r for r in sources.requests if r.url.host == "gh.test"]
    assert {r.url.params.get("cve_id") or r.url.params.get("ghsa_id") for r in gh} == {
        "CVE-2021-44228",
        "GHSA-jfh8-c2jp-5v3q",
    }
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in gh)
    nvd_req = next(r for r in sources.requests if r.url.host == "nvd.test")
    assert nvd_req.url.params["cveId"] == "CVE-2021-44228"
    assert provider.last_failures == ()


async def test_free_text_asks_only_nvd_and_kev(make: Any) -> None:
    sources = FakeSources()
    hits = await make(sources).search("log4j2 remote code execution", 5)
    assert sorted(set(sources.hosts())) == ["kev.test", "nvd.test"]
    nvd_req = next(r for r in sources.requests if r.url.host == "nvd.test")
    assert nvd_req.url.params["keywordSearch"] == "log4j2 remote code execution"
    assert len(hits) == 2


async def test_one_source_failing_is_tolerated(make: Any) -> None:
    sources = FakeSources(broken=frozenset({"nvd"}))
    provider = make(sources)
    hits = await provider.search("CVE-2021-44228", 10)
    assert hits and not any("nvd.nist.gov" in h.url for h in hits)
    assert len(provider.last_failures) == 1 and provider.last_failures[0].startswith(
        "nvd: HTTP 500"
    )
    assert TOKEN not in provider.last_failures[0]


async def test_every_source_failing_raises_retryable(make: Any) -> None:
    sources = FakeSources(broken=frozenset({"osv", "nvd", "github", "kev"}))
    with pytest.raises(ProviderError) as info:
        await make(sources).search("CVE-2021-44228", 10)
    assert info.value.retryable and info.value.provider == "security"
    assert "all sources failed" in str(info.value) and TOKEN not in str(info.value)


async def test_all_rate_limited_is_rate_limited(make: Any) -> None:
    def limited(request: httpx.Request) -> httpx.Response:
        wait = "30" if request.url.host == "nvd.test" else "5"
        return httpx.Response(429, headers={"Retry-After": wait})

    client = httpx.AsyncClient(transport=httpx.MockTransport(limited))
    provider = SecuritySearch(client, nvd_url="https://nvd.test", kev_url="https://kev.test/k")
    with pytest.raises(RateLimited) as info:
        await provider.search("openssl", 3)
    assert info.value.retry_after_s == 5.0
    await client.aclose()


async def test_github_rate_limit_via_403_headers(make: Any) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "gh.test":
            headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 60)}
            return httpx.Response(403, headers=headers, json={"message": "rate limit"})
        return FakeSources()(request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = SecuritySearch(
        client,
        osv_url="https://osv.test",
        nvd_url="https://nvd.test",
        github_url="https://gh.test",
        kev_url="https://kev.test/k",
        clock=lambda: NOW,
    )
    hits = await provider.search("GHSA-jfh8-c2jp-5v3q", 5)
    assert hits
    assert provider.last_failures == ("github: rate limited",)
    await client.aclose()


async def test_kev_feed_is_cached_until_ttl(make: Any) -> None:
    sources = FakeSources()
    provider = make(sources)
    await provider.search("acme widget", 3)
    await provider.search("log4j2 remote", 3)
    assert sources.hosts().count("kev.test") == 1


async def test_malformed_source_json_counts_as_that_source_failing(make: Any) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "kev.test":
            return httpx.Response(200, text="<html>not json</html>")
        return FakeSources()(request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = SecuritySearch(client, nvd_url="https://nvd.test", kev_url="https://kev.test/k")
    hits = await provider.search("log4j2", 3)
    assert [h.url for h in hits] == ["https://nvd.nist.gov/vuln/detail/CVE-2021-44228"]
    assert provider.last_failures == ("kev: response is not valid JSON",)
    await client.aclose()
