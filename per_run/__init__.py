"""Plain objects a run host holds for one run (not actors), and the latency hiding."""
