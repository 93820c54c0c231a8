"""Command bodies for remote.cli: each module has run(args) -> int."""
