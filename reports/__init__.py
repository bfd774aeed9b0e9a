"""Rendering a finished report: Markdown, and the JSON and HTML exports."""
