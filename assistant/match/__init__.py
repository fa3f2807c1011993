"""match stage: Report × KB → ranked matches, confidence, version verdicts."""
