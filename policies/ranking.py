"""Fuse ranked hit lists from several queries (and providers) into one candidate order.

Reciprocal rank fusion needs no score calibration across providers: a page that ranks well for
several of the researcher's queries rises above one that ranks first for a single query.
"""

from __future__ import annotations

from collections.abc import Sequence

from deepresearch.policies.urls import normalize_url
from deepresearch.schemas import SearchHit

RRF_K = 60


def fuse(result_lists: Sequence[Sequence[SearchHit]], k: int = RRF_K) -> list[SearchHit]:
    """Hits ordered by summed ``1 / (k + rank)``; ties keep first-seen order. Deterministic."""
    scores: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    order: dict[str, int] = {}
    for hits in result_lists:
        for hit in hits:
            key = normalize_url(hit.url)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + hit.rank)
            if key not in first:
                first[key] = hit
                order[key] = len(order)
    ranked = sorted(scores, key=lambda key: (-scores[key], order[key]))
    return [
        first[key].model_copy(update={"url": key, "rank": i + 1}) for i, key in enumerate(ranked)
    ]


def batches(items: Sequence[str], sizes: Sequence[int], limit: int) -> list[list[str]]:
    """Split the first ``limit`` items into batches of the configured sizes (the last size repeats)."""
    out: list[list[str]] = []
    pos = 0
    items = list(items)[:limit]
    index = 0
    while pos < len(items) and sizes:
        size = max(1, sizes[min(index, len(sizes) - 1)])
        out.append(items[pos : pos + size])
        pos += size
        index += 1
    return out
