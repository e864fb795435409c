"""Results kept between runs: the store (run folders + index), the record read back, the firmware
regression gate and its statistics, compare and trend (``ssdqual rejudge``: ``report.rejudge``).
"""
