"""``python -m pytest_ssdqual.cli``: the ``ssdqual`` command."""

from pytest_ssdqual.cli.main import main

raise SystemExit(main())
