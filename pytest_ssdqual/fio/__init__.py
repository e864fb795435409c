"""fio integration: job rendering (``job``), running (``runner``) and result parsing (``result``)."""
