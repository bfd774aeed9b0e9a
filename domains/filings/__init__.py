"""Financial statements and the filings that hold them: recognition, identity, periods and the
Answer composed from table rows. Loaded by the registry (``deepresearch.domains``) only."""
