"""Fakes shipped with the package for offline tests: a scripted LLM, loopback servers."""
