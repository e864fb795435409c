"""The qualification suites. The ``qualify``, ``run_methodology``, ``ssd_drive`` and
``fio_workload`` fixtures come from the pytest-ssdqual plugin (entry point ``pytest11``).

``ssdqual_suite = True`` declares this folder a qualification suite: the plugin is in play from
the start of the run (report header with the fio version, SIGTERM handled like Ctrl-C, under
``-n`` each drive's tests kept on one worker), also without ``--drive``."""

ssdqual_suite = True
