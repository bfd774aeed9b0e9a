"""The driver side of one run: check, prepare, execute on the crew, finish."""
