"""tui stage."""
