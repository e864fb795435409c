"""qualify."""
