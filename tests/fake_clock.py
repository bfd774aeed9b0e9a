"""A clock and sleep for unit tests of breakers, retries and rate limits: sleeping advances the
clock at once and is recorded, so a test asserts the delays without waiting for them."""

from __future__ import annotations


class FakeClock:
    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
