"""triage stage."""
