"""Threshold files: schema validation and loading (``loader``), limits and verdicts (``verdict``)."""
