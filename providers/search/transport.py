"""One HTTP call for the web search providers, with a single mapping from failures to errors.

Every provider speaks HTTP through the one injected ``httpx.AsyncClient``, and the gateway's
retry and breaker logic only understand ``ProviderError``/``RateLimited``. Mapping status codes
here keeps that contract identical across providers: 429 is ``RateLimited`` with the server's
``Retry-After``; 5xx, timeouts and connection failures are retryable; other 4xx are not. Reasons
never include request URLs (Google's key travels in the query string) and any secret value that
might be echoed in a response body is masked.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.policies.resilience.retry import parse_retry_after
from deepresearch.schemas import SearchHit

Clock = Callable[[], float]
DEFAULT_TIMEOUT_S = 20.0
SNIPPET_CHARS = 400
_BODY_EXCERPT = 160
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


def clean_text(text: object, limit: int = SNIPPET_CHARS) -> str:
    """Plain text from an API's snippet: tags dropped, entities decoded, whitespace collapsed."""
    if not isinstance(text, str):
        return ""
    plain = _SPACE.sub(" ", html.unescape(_TAG.sub(" ", text))).strip()
    if len(plain) > limit:
        plain = plain[: limit - 1].rstrip() + "…"
    return plain


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every non-trivial secret value replaced by ``***``."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def status_error(
    provider: str,
    response: httpx.Response,
    *,
    secrets: Iterable[str] = (),
    clock: Clock = time.time,
) -> ProviderError | None:
    """The error a non-2xx response stands for, or None when the response is a success."""
    status = response.status_code
    if 200 <= status < 300:
        return None
    if status == 429:
        return RateLimited(
            provider, parse_retry_after(response.headers.get("retry-after"), clock())
        )
    excerpt = ""
    try:
        excerpt = clean_text(response.text, _BODY_EXCERPT)
    except (UnicodeDecodeError, httpx.ResponseNotRead):
        excerpt = ""
    reason = f"HTTP {status}" + (f": {mask(excerpt, secrets)}" if excerpt else "")
    if status >= 500:
        retry_after = parse_retry_after(response.headers.get("retry-after"), clock())
        return ProviderError(provider, reason, True, retry_after)
    return ProviderError(provider, reason, False, None)


async def request(
    client: httpx.AsyncClient,
    provider: str,
    method: str,
    url: str,
    *,
    params: Mapping[str, str | int] | None = None,
    headers: Mapping[str, str] | None = None,
    json_body: Any = None,
    secrets: Iterable[str] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
    clock: Clock = time.time,
    ok_statuses: Iterable[int] = (),
) -> httpx.Response:
    """Send one request; raise the provider error for any transport failure or bad status.

    Statuses in ``ok_statuses`` (e.g. 404 for "no such advisory") are returned to the caller.
    """
    try:
        response = await client.request(
            method,
            url,
            params=dict(params) if params is not None else None,
            headers=dict(headers) if headers is not None else None,
            json=json_body,
            timeout=timeout_s,
        )
    except httpx.TimeoutException:
        raise ProviderError(provider, f"timed out after {timeout_s:g}s", True, None) from None
    except httpx.TransportError as exc:
        raise ProviderError(provider, f"connection failed ({type(exc).__name__})", True) from None
    if response.status_code in set(ok_statuses):
        return response
    error = status_error(provider, response, secrets=list(secrets), clock=clock)
    if error is not None:
        raise error
    return response


def json_of(provider: str, response: httpx.Response) -> Any:
    """The response's JSON body; a body that is not JSON is a (non-retryable) provider error."""
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        raise ProviderError(provider, "response is not valid JSON", False) from None


def json_dict(provider: str, response: httpx.Response) -> dict[str, Any]:
    data = json_of(provider, response)
    if not isinstance(data, dict):
        raise ProviderError(provider, "unexpected JSON shape (expected an object)", False)
    return data


def dict_items(provider: str, value: object, what: str) -> list[dict[str, Any]]:
    """``value`` as a list of objects; anything else is a malformed response."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProviderError(provider, f"unexpected JSON shape ({what} is not a list)", False)
    return [item for item in value if isinstance(item, dict)]


def text_field(item: Mapping[str, Any], *keys: str) -> str:
    """The first non-empty string among ``keys`` of ``item``."""
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def is_web_url(url: str) -> bool:
    return url.startswith(("http://", "https://"))


def ranked_hits(
    provider: str, found: Iterable[tuple[str, str, str]], limit: int
) -> list[SearchHit]:
    """``SearchHit``s from (url, title, snippet) in the provider's order: web URLs only, each once,
    ranks 1..n, at most ``limit``."""
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for url, title, snippet in found:
        if limit <= len(hits):
            break
        if not is_web_url(url) or url in seen:
            continue
        seen.add(url)
        hits.append(
            SearchHit(
                url=url,
                title=clean_text(title, 200) or url,
                snippet=clean_text(snippet),
                provider=provider,
                rank=len(hits) + 1,
                location=url,
            )
        )
    return hits
