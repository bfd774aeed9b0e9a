"""Every error class pickles and unpickles with its fields intact (Ray ships them between processes)."""

from __future__ import annotations

import inspect
import pickle

import pytest

from deepresearch import errors

CLASSES = [
    obj
    for obj in vars(errors).values()
    if inspect.isclass(obj) and issubclass(obj, errors.DeepResearchError)
]


def _sample_args(cls: type) -> tuple[object, ...]:
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    values: list[object] = []
    for i, p in enumerate(params):
        default = p.default
        if isinstance(default, bool):
            values.append(not default)
        elif isinstance(default, float) or (default is None and "after" in p.name):
            values.append(1.5 + i)
        elif isinstance(default, int):
            values.append(7 + i)
        elif isinstance(default, tuple):
            values.append(("a", "b"))
        else:
            values.append(f"value-{p.name}")
    return tuple(values)


def test_every_error_class_is_covered() -> None:
    assert len(CLASSES) >= 15


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_round_trip_keeps_fields(cls: type[errors.DeepResearchError]) -> None:
    err = cls(*_sample_args(cls))
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is cls
    assert str(clone) == str(err)
    assert clone.exit_code == err.exit_code
    fields = {k: v for k, v in vars(err).items()}
    assert {k: v for k, v in vars(clone).items()} == fields


def test_keyword_construction_round_trips() -> None:
    err = errors.ProviderError("search", reason="boom", retryable=True, retry_after_s=3.0)
    clone = pickle.loads(pickle.dumps(err))
    assert (clone.provider, clone.reason, clone.retryable, clone.retry_after_s) == (
        "search",
        "boom",
        True,
        3.0,
    )


def test_exit_codes() -> None:
    assert errors.ConfigError("k", "bad").exit_code == 2
    assert errors.CorpusError("p", "r").exit_code == 2
    assert errors.StorageError("p", "r").exit_code == 2
    assert errors.RunInterrupted("r").exit_code == 130
