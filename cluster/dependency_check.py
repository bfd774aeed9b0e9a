"""What a submitted job checks first: does the cluster's Python have every dependency?

A Ray Job runs its entrypoint with whatever ``python`` the head's PATH offers, which need not be
the Python that runs Ray (a head started from a virtualenv that is not on its PATH). This module
is standard library only, so it runs and names what is missing under any of them:
``deep-research submit`` runs it as a tiny job before the real one, and ``python -m deepresearch``
runs it before importing anything else.
"""

from __future__ import annotations

import importlib.util
import json
import sys

MARKER = "DEEP-RESEARCH-PREFLIGHT"
MIN_PYTHON = (3, 11)

# distribution -> the module it provides; a test keeps the keys equal to pyproject's dependencies.
RUNTIME_MODULES = {
    "ray": "ray",
    "pydantic": "pydantic",
    "pydantic-settings": "pydantic_settings",
    "pyyaml": "yaml",
    "click": "click",
    "rich": "rich",
    "httpx": "httpx",
    "httpcore": "httpcore",
    "idna": "idna",
    "aiohttp": "aiohttp",
    "yarl": "yarl",
    "bm25s": "bm25s",
    "snowballstemmer": "snowballstemmer",
    "numpy": "numpy",
    "pypdfium2": "pypdfium2",
    "python-docx": "docx",
    "python-pptx": "pptx",
    "openpyxl": "openpyxl",
    "trafilatura": "trafilatura",
    "justext": "justext",
    "lxml": "lxml",
    "lxml-html-clean": "lxml_html_clean",
    "brotli": "brotli",
    "json-repair": "json_repair",
    "openai": "openai",
    "google-genai": "google.genai",
    "ddgs": "ddgs",
    "aiolimiter": "aiolimiter",
    "mcp": "mcp",
    "markdown-it-py": "markdown_it",
    "confusable-homoglyphs": "confusable_homoglyphs",
}


def missing() -> list[str]:
    """Distributions whose module this Python cannot find."""
    absent = []
    for dist, module in RUNTIME_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package is missing or broken
            found = False
        if not found:
            absent.append(dist)
    return absent


def report() -> dict[str, object]:
    version = ".".join(str(part) for part in sys.version_info[:3])
    too_old = sys.version_info[:2] < MIN_PYTHON
    return {"python": sys.executable, "version": version, "too_old": too_old, "missing": missing()}


def problem(found: dict[str, object]) -> str:
    """One line saying what this Python lacks, or "" when it has everything."""
    absent = found.get("missing")
    lacks = [str(name) for name in absent] if isinstance(absent, list) else []
    if found.get("too_old"):
        lacks.insert(0, "Python >= {}.{}".format(*MIN_PYTHON))
    if not lacks:
        return ""
    shown = ", ".join(str(name) for name in lacks[:6]) + (" ..." if len(lacks) > 6 else "")
    return f"{found.get('python')} (Python {found.get('version')}) lacks {shown}"


def require() -> None:
    """Exit 2 with one line when this Python cannot run the package (``python -m deepresearch``)."""
    found = report()
    text = problem(found)
    if text:
        print(
            f"deep-research: error: {text}: install ray-deep-research in this Python "
            "(pip install ray-deep-research) or run it with the Python that has it",
            file=sys.stderr,
        )
        raise SystemExit(2)


if __name__ == "__main__":
    # ``as``: the name the submitter tried this Python by (it may try several in one job).
    tried = sys.argv[1] if len(sys.argv) > 1 else None
    print(MARKER, json.dumps({**report(), "as": tried}), flush=True)
