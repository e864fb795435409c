"""Which ``--remote-identity`` file describes a ``--drive=fio://HOST/dev/X`` (used when the host
has no SSH access), and what an old file may still do.

A file is taken when it names the device (its ``device``, or its ``by_id`` link when that is
what the drive value gives) *and* the host: the typed HOST must be one of the file's
``host_names`` (``drive.host_names.host_matches``: the same name or address, or a name that
resolves here to one of its addresses). A file for the same device path made on another host
is refused, naming both hosts and the fix: its serial would otherwise unlock writes on this
host's drive of the same name. A file made before ``host_names`` and ``by_id`` were recorded
(``RemoteIdentity.legacy``) is matched by device path as before (its ``host`` breaking ties)
and is good for reads only: writes are refused with the command that re-makes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pytest_ssdqual.drive.host_names import host_matches, resolve_addresses
from pytest_ssdqual.drive.identity_file import RemoteIdentity, load_identity_file
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.errors import ConfigError, DeviceError

__all__ = ["identity_file_for", "legacy_refusal"]


def legacy_refusal(path: str, spec: DriveSpec) -> str:
    """The write refusal of a legacy identity file ``path`` for ``spec``."""
    return (f"{path} is an identity file of an older ssdqual (no host_names, no by_id): it "
            f"cannot show it was made on {spec.host} nor which drive fio opens there, so "
            f"writes are refused (reads run): re-make it on that host: ssdqual identify --json "
            f"--host-alias {spec.host} {spec.path} > {path}")


def _mismatch(spec: DriveSpec, bad: list[tuple[str, RemoteIdentity]]) -> ConfigError:
    path, doc = bad[0]
    others = f" (and {', '.join(p for p, _ in bad[1:])})" if len(bad) > 1 else ""
    return ConfigError(
        f"{path}{others}: made on {doc.host or '?'} (it answers to "
        f"{', '.join(doc.host_names or ()) or 'no recorded name'}), not on {spec.host} as "
        f"--drive={spec.raw} names it: it may describe another host's {spec.path}, and its "
        "serial must not unlock writes here", key="--remote-identity",
        fix=f"re-make it on {spec.host}: ssdqual identify --json {spec.path} > FILE; if "
        f"{spec.host} is that host under another name, add the name there: ssdqual identify "
        f"--json --host-alias {spec.host} {spec.path} > FILE")


def identity_file_for(spec: DriveSpec, files: Iterable[str],
                      resolve: Callable[[str], Iterable[str]] = resolve_addresses,
                      ) -> tuple[str, RemoteIdentity, tuple[str, ...]]:
    """The one ``--remote-identity`` file of ``spec`` (module docstring).

    Args:
        spec: a ``fio://`` drive.
        files: the ``--remote-identity`` paths.
        resolve: host name -> addresses here (for tests; default ``getaddrinfo``).

    Returns:
        ``(path, document, write_refusals)``: the refusals are the legacy file's (empty for a
        current one).

    Raises:
        ConfigError: (key ``--remote-identity``) a file is unreadable or not an identity
            document; the only files for the device were made on another host (naming the
            file, its host and names, the host typed and the fix).
        DeviceError: no file for the device, or two that fit equally.
    """
    docs = [(path, load_identity_file(path)) for path in files]
    for_device = [(p, d) for p, d in docs if spec.path in (d.device, d.by_id)]
    current = [(p, d) for p, d in for_device if not d.legacy]
    fits = [(p, d) for p, d in current if host_matches(spec.host, d.host_names or (), resolve)]
    if len(fits) == 1:
        return fits[0][0], fits[0][1], ()
    if len(fits) > 1:
        raise DeviceError(f"{spec.raw}: --remote-identity files {', '.join(p for p, _ in fits)} "
                          f"all describe {spec.path} on {spec.host} (one is needed)")
    legacy = [(p, d) for p, d in for_device if d.legacy]
    if len(legacy) > 1:
        legacy = [(p, d) for p, d in legacy if d.host == spec.host] or legacy
    if len(legacy) == 1:
        path, doc = legacy[0]
        return path, doc, (legacy_refusal(path, spec),)
    if current and not legacy:
        raise _mismatch(spec, current)
    found = "none" if not legacy else ", ".join(p for p, _ in legacy)
    raise DeviceError(f"{spec.raw}: --remote-identity files for {spec.path}: {found} "
                      "(one is needed)")
