"""The knowledge base: the Case model, loading and validation."""
