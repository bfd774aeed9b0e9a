"""Stack Exchange questions through the public API (``/2.3/search/advanced``), key optional.

The API reports its own errors as a JSON object with HTTP 400, including throttling
(``throttle_violation``, "more requests available in N seconds"), so those bodies are read here
rather than treated as generic client errors: throttling becomes ``RateLimited`` with that wait.
"""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.providers.search.transport import (
    DEFAULT_TIMEOUT_S,
    Clock,
    clean_text,
    dict_items,
    json_dict,
    mask,
    ranked_hits,
    request,
    text_field,
)
from deepresearch.schemas import SearchHit

_WAIT = re.compile(r"(\d+)\s*seconds?")
_THROTTLE_IDS = (502,)  # throttle_violation


def _snippet(item: dict[str, Any]) -> str:
    facts = []
    score = item.get("score")
    if isinstance(score, int):
        facts.append(f"{score} votes")
    if item.get("is_answered") is True:
        facts.append("answered")
    tags = item.get("tags")
    if isinstance(tags, list) and tags:
        facts.append("tags: " + ", ".join(str(t) for t in tags[:5]))
    body = clean_text(item.get("body"), 300)
    head = f"[{'; '.join(facts)}] " if facts else ""
    return head + body


class StackExchangeSearch:
    """``SearchProvider`` for one Stack Exchange site (default Stack Overflow)."""

    name = "stackexchange"
    MAX_RESULTS = 100

    def __init__(
        self,
        client: httpx.AsyncClient,
        api_key: SecretStr | None = None,
        *,
        site: str = "stackoverflow",
        base_url: str = "https://api.stackexchange.com",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clock: Clock = time.time,
    ) -> None:
        self._client = client
        self._key = api_key
        self.site = site
        self.base_url = base_url.rstrip("/")
        self._timeout_s = timeout_s
        self._clock = clock

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        secret = self._key.get_secret_value() if self._key is not None else ""
        params: dict[str, str | int] = {
            "q": query,
            "site": self.site,
            "order": "desc",
            "sort": "relevance",
            "pagesize": max(1, min(limit, self.MAX_RESULTS)),
            "filter": "withbody",
        }
        if secret:
            params["key"] = secret
        response = await request(
            self._client,
            self.name,
            "GET",
            f"{self.base_url}/2.3/search/advanced",
            params=params,
            headers={"Accept": "application/json"},
            secrets=[secret],
            timeout_s=self._timeout_s,
            clock=self._clock,
            ok_statuses=(400,),
        )
        data = json_dict(self.name, response)
        if "error_id" in data or response.status_code == 400:
            raise self._api_error(data, secret)
        items = dict_items(self.name, data.get("items"), "items")
        return ranked_hits(
            self.name,
            ((text_field(i, "link"), text_field(i, "title"), _snippet(i)) for i in items),
            limit,
        )

    def _api_error(self, data: dict[str, Any], secret: str) -> ProviderError:
        error_id = data.get("error_id")
        message = mask(clean_text(data.get("error_message"), 200), [secret])
        if error_id in _THROTTLE_IDS:
            wait = _WAIT.search(message)
            return RateLimited(self.name, float(wait.group(1)) if wait else None)
        name = text_field(data, "error_name") or "bad request"
        return ProviderError(self.name, f"{name}: {message}".rstrip(": "), False)
