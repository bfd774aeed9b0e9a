"""The base of every settings section: unknown keys are errors, values never change after load;
and the one type of a path setting."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _no_nul(path: Path) -> Path:
    """A NUL byte cannot be in a file name: every os call on the path would raise ValueError
    deep inside a run, so it is a bad setting, named, when the settings are read."""
    if "\x00" in str(path):
        raise ValueError("a path cannot contain a NUL byte")
    return path


FsPath = Annotated[Path, AfterValidator(_no_nul)]
