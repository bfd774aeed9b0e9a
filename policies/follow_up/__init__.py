"""Pure decisions for a follow-up run: what an earlier run lends it."""
