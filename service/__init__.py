"""The research service: an HTTP API (aiohttp) and a small web page over the same runs the CLI makes."""
