"""trl-help: diagnose TRL / PEFT / DeepSpeed / accelerate / vLLM training failures.

Pipeline: parse → match → report → probe. Importing this package is cheap: heavy libraries
(torch, transformers, sentence-transformers) are only imported where they are needed.
"""

__version__ = "0.1.0"
