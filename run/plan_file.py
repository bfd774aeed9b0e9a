"""A user-fixed research agenda: parsing and checking ``--plan-file``, and writing one.

The file is YAML: a list of sub-questions, or a mapping ``{subtasks: [...]}`` (what
``deep-research plan`` prints). Every problem is one ``InputError`` line naming the file, so a
script that edited a plan badly learns what to fix before any research starts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from deepresearch.errors import InputError

MAX_ITEM_CHARS = 500


def check_items(items: Iterable[Any], origin: str, max_items: int) -> tuple[str, ...]:
    """Stripped, de-duplicated sub-questions; empty, non-text, too many or too long is an error."""
    out: list[str] = []
    for i, item in enumerate(items, start=1):
        if not isinstance(item, str):
            raise InputError(f"{origin}: item {i} is not text (got {type(item).__name__})")
        text = " ".join(item.split())
        if not text:
            raise InputError(f"{origin}: item {i} is empty")
        if len(text) > MAX_ITEM_CHARS:
            raise InputError(f"{origin}: item {i} is longer than {MAX_ITEM_CHARS} characters")
        if text not in out:
            out.append(text)
    if not out:
        raise InputError(f"{origin}: the plan has no sub-questions")
    if len(out) > max_items:
        raise InputError(
            f"{origin}: {len(out)} sub-questions; the limit is {max_items} "
            "(the largest of deep.researchers_by_complexity)"
        )
    return tuple(out)


def parse_plan(text: str, origin: str, max_items: int) -> tuple[str, ...]:
    """The agenda in a plan file's text."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{origin}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if isinstance(data, dict):
        unknown = sorted(str(k) for k in data if k != "subtasks")
        if unknown:
            raise InputError(f"{origin}: unknown key {unknown[0]!r} (expected 'subtasks')")
        data = data.get("subtasks")
    if data is None:
        raise InputError(f"{origin}: the plan has no sub-questions")
    if not isinstance(data, list):
        raise InputError(f"{origin}: expected a list of sub-questions or {{subtasks: [...]}}")
    return check_items(data, origin, max_items)


def dump_plan(items: Iterable[str], query: str = "") -> str:
    """The YAML ``deep-research plan`` prints and ``--plan-file`` reads back."""
    head = f"# Research agenda for: {' '.join(query.split())}\n" if query else ""
    body = yaml.safe_dump(
        {"subtasks": list(items)}, allow_unicode=True, sort_keys=False, width=1000
    )
    return head + body
