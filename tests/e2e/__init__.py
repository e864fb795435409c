"""End-to-end tests: the real fio on real block devices (loop devices, /dev/zram0,
blkio-throttled emulated drives); they need root and skip otherwise."""
