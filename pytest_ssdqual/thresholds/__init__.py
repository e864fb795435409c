"""Threshold files: validation and resolution (``loader``), limits and verdicts
(``verdict``)."""
