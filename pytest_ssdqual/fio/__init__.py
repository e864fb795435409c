"""fio integration: job files (``job``), running (``runner``), parsing (``result``)."""
