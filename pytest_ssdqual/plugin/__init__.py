"""The pytest adapter, hooks and fixtures only: ``hooks`` is the ``pytest11`` entry point; every
decision is delegated to the plain modules of the other subpackages."""
