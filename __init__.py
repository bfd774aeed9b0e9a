"""ray-deep-research: a deep-research agent built as an actor system on Ray."""

import time as _time

__version__ = "0.1.0"

# When this process began importing the package: a CLI run's wall time counts from here, so the
# seconds spent importing Ray and starting it are reported, not hidden.
STARTED_AT = _time.monotonic()
