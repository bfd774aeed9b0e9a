"""The filing answer composer: the Answer section from a filing's table rows."""
