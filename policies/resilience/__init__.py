"""Pure decisions for failing providers: breakers, retries, rate limits."""
