"""The harness's own benchmarks: ``python -m benchmarks`` (see BENCHMARKS.md at the top level).

Plain scripts and one pytest plugin (``benchmarks.fio_clock``) that times every fio process a
pytest run starts; nothing here is imported by ``pytest_ssdqual``."""
