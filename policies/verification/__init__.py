"""Pure checks of cited text: citations, support, verify, rewrite."""
