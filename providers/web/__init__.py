"""The safe web fetcher: pinned addresses, capped and sniffed bodies."""
