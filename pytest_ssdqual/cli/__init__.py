"""The ``ssdqual`` command (``main``); one module per command group (``compare``, ``rejudge``,
``trend``, ``runs``, ``report``, ``emu``) and ``options``: exit codes and the shared options."""
