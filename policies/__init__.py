"""Pure decisions, by concept in sub-folders: each a function of (state, event, now) or of its
inputs, with no I/O; the URL rules every sub-folder shares (``urls``) sit here."""
