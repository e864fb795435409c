"""Emulated drives (``--drive=emu:MODEL``): a model file (``model``), a loop device in a blkio
cgroup (``emulator``, ``target``) and the daemon that turns the drive's history into throttle
caps (``controller``)."""
