"""The qualification suites shipped with pytest-ssdqual: ``pytest suites/`` in a checkout, or
``pytest --pyargs pytest_ssdqual.suites`` from an installed wheel (the wheel carries this folder
as that package: pyproject.toml's ``[tool.setuptools.package-dir]``)."""
