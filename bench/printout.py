"""How every benchmark prints its figures: one JSON object (``--json``), or a line per figure."""

from __future__ import annotations

import json
from typing import Any


def show(result: dict[str, Any], as_json: bool) -> None:
    """One JSON object, or one ``key: value`` line per figure."""
    if as_json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
