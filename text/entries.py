"""Definition-list entries of documentation: a term (a command line's flags) and its description.

A reference states its answers in entries ("-f, --force  ignore nonexistent files, never
prompt"); extracted text puts the flags on a line of their own, read as a heading over the
description, or runs a page's entries together. One grammar of a flag and an entry's head,
for the evidence (the description keeps its term) and the generic Answer (an entry is
quoted alone, with its own flags and default).
"""

from __future__ import annotations

import re

# a flag as a command line writes it: "-L", "--in-place", "--tail", "-i[SUFFIX]", "--file=F"
_FLAG = r"--?[A-Za-z0-9][\w-]*(?:\[[^\]\s]*\])?(?:=\S+)?"
FLAG = re.compile(rf"(?<![\w-]){_FLAG}")
# an entry's head: its flags ("-f, --follow", "-n, --tail string"), opening a statement
HEAD = re.compile(rf"\s*{_FLAG}(?:,\s*{_FLAG})*")
# a line holding only an entry's head: its flags and their argument's name ("-t, --time int",
# "-B, --block-size=SIZE", "-r, -R, --recursive")
_HEAD_LINE = re.compile(rf"\s*{_FLAG}(?:,\s*{_FLAG})*(?:\s+[A-Za-z_]+)?\s*")


def head_line(heading: str) -> str:
    """The last line of a unit's ``heading`` (its lines joined by " / ") when it is only an
    entry's head, else ""."""
    last = heading.rsplit(" / ", 1)[-1]
    return last.strip() if last and _HEAD_LINE.fullmatch(last) else ""


def with_term(text: str, heading: str) -> str:
    """``text`` opened by its entry's flags when the line above it held only them and it
    starts as a description does (lower case): "-f, --force ignore nonexistent files"."""
    head = head_line(heading)
    if head and text[:1].islower():
        return f"{head} {text}"
    return text


__all__ = ["FLAG", "HEAD", "head_line", "with_term"]
