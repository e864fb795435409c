"""Binary size units and the dry run's scratch file size: constants the plugin's option
definitions need before anything else of the package is imported (``plugin.options``)."""

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

#: The dry run (no ``--drive``): the plugin's own scratch file is this big (``--scratch-size``
#: overrides it), and every fio run writing to it writes at most ``SCRATCH_WRITE_BUDGET_BYTES``
#: (a job that fills its area writes it once): a dry run's bytes then do not grow with the
#: speed of the host's disk (``fio.job.budgeted_io_bytes``). Drives named with ``--drive`` are
#: not budgeted. 128 MiB: the client presets' larger smoke test size (100 MiB) fits, so the
#: dry run measures every figure a drive's smoke run does.
SCRATCH_FILE_BYTES = 128 * MIB
SCRATCH_WRITE_BUDGET_BYTES = 4 * MIB
