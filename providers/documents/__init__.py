"""Text out of documents (PDF, HTML, office formats) in a killable process pool."""
