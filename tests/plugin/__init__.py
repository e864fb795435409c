"""Plugin tests: the pytest plugin in pytester sessions against the fake fio
(``tests/fakefio.py``) and fake drives."""
