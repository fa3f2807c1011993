"""report stage: one renderer per format (rich text, markdown, JSON) and KB case pages."""
