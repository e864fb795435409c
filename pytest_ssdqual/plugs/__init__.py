"""Lab hardware behind small interfaces ("plugs"): power switch, power meter, firmware updater.

A plug is chosen per drive, by option (``--power-switch``, ``--power-meter``,
``--firmware-updater``) or in the lab inventory (``plugs:`` of a drive entry; the option beats
the inventory), as a *plug spec* (:mod:`pytest_ssdqual.plugs.spec`)::

    emu                                   the emulated drive's own plug (emu: drives only)
    cmd:ipmitool -H pdu1 chassis power {action}
                                          a command run without a shell, placeholders filled in
    quarch:USB::QTL1999-02-001            a Quarch module through quarchpy (optional dependency)
    csv:/var/log/meter.csv                a meter's samples appended by another program
    nvme | hdparm                         the firmware updater built into nvme-cli / hdparm

One module per plug kind holds its ``Protocol`` and its real implementations; the emulated
implementations live in :mod:`pytest_ssdqual.emulate` (they satisfy the protocols by shape and
do not import this package), and every plug has a recording stand-in under ``tests/`` that
records the exact commands, as ``tests/fakefio.py`` does for fio.
"""
