"""Text analysis shared by providers and policies: table rows, questions, boilerplate.

Policies and providers both import from here; nothing here imports from either, so the layers
stay one-way (``text`` <- ``providers`` / ``policies``).
"""
