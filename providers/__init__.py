"""What a run talks to: language models (``llm/``), search (``search/``), reading documents and web
pages (here), and building all of them from settings (``assembly/``)."""
