"""The qualification suites. The ``qualify`` and ``ssd_drive`` fixtures come from the
pytest-ssdqual plugin (entry point ``pytest11``); nothing is configured here."""
