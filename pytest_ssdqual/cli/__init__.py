"""The ``ssdqual`` command: identify, rejudge, compare, trend, report, summary, emulated (``main``;
``emu`` and ``report`` hold the sub-commands of emulated drives and of reports)."""
