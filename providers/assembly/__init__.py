"""Building a run's providers from settings: router, search chain, fetchers."""
