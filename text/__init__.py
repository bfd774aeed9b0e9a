"""Text analysis shared by providers and policies: sentences, terms and stop words, names, figures,
periods, questions, boilerplate and table rows.

Policies and providers both import from here; nothing here imports from either, so the layers
stay one-way (``text`` <- ``providers`` / ``policies``; ``tests/unit/test_layers.py`` checks it).
"""
