"""The drive under test: ``--drive`` grammar (spec), safety rules, the target and its lock,
identity, inventory, health and power states. Plain Python; ``emulate`` builds on it."""
