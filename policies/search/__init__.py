"""Pure search decisions: URLs, merging, ranking and scoring hits."""
