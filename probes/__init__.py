"""Probes: reproduce a KB case on the user's model, apply the fix, report a verdict."""
