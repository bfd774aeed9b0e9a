"""The Ray actors: the run host and the crew's members (researchers, evaluator, search gateway,
ledger), the plain classes they run, and the crew that names them."""
