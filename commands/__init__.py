"""The CLI's subcommands, one module each, registered on ``cli.py``'s group."""
