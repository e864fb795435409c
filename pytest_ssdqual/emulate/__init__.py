"""emulate."""
