"""How many sources a researcher reads at once: the configured batch sizes over a ranked list.

Pure and light on its own (no numpy): the driver's progress display counts batches too.
"""

from __future__ import annotations

from collections.abc import Sequence


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


def batch_count(n: int, sizes: Sequence[int], limit: int) -> int:
    """How many batches ``batches`` makes of ``n`` items."""
    return len(batches([""] * min(n, limit), sizes, limit))
