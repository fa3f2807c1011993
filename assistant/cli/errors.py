"""CLI errors: a UsageError is printed as one line and exits 2."""


class UsageError(Exception):
    """Bad input or arguments: printed as `trl-help: error: …`, exit 2."""
