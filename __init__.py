"""ray-deep-research: a deep-research agent built as an actor system on Ray."""

__version__ = "0.1.0"
