"""Pure decisions of a run's lifecycle: the reducer and its events, checkpoints, progress."""
