"""CLI errors and exit codes, the same rule for every command.

- 0: everything asked for was processed (whatever was found);
- 1: processed, but some items were dropped or malformed (they are listed), or `kb validate`
  found problems;
- 2: unusable input or arguments (`UsageError`): one line, `trl-help: error: ...`;
- 3: an internal fault: one line pointing to `--debug`, which shows the traceback.
"""

EXIT_OK = 0
EXIT_PARTIAL = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class UsageError(Exception):
    """Bad input or arguments: printed as `trl-help: error: ...`, exit 2."""
