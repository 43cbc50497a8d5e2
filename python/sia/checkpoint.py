"""Checkpoint files: atomic, checksummed, named by ``latest``.

Layout of a checkpoint directory (sia-worker(7), FILES)::

    latest                  one line: the name of the current checkpoint
    ckpt-NNNNNNNNNNNN.pt    the checkpoint at step N

A checkpoint file is a header line ``SIACKPT-PY <version> <length> <crc32>``
followed by the payload (bytes the caller serialised).

Promises:
  * :func:`save` writes the file to a temporary name in the directory, fsyncs
    it, renames it into place and fsyncs the directory; then replaces
    ``latest`` the same way.  A crash at any point leaves ``latest`` naming a
    complete checkpoint (or no ``latest``).  The one ``latest`` names and the
    one it named before are kept; older checkpoints and the temporary files of
    dead writers are removed.
  * :func:`load_latest` returns None when there is no ``latest``; a ``latest``
    that names a missing file raises status 66; a truncated file, a checksum
    mismatch or a malformed ``latest`` raises status 65.  It never falls back
    to an older checkpoint.
Not thread-safe: one writer per directory (rank 0).
"""

import os
import re
import zlib

from sia.status import CANT_CREATE, DATA, IO_ERROR, NO_INPUT, SiaError

FORMAT_VERSION = 1
LATEST = "latest"
_MAGIC = b"SIACKPT-PY"
_NAME = re.compile(r"^ckpt-[0-9]{12}\.pt$")
_TEMP = re.compile(r"^\..+\.tmp\.([0-9]+)$")


def checkpoint_name(step):
    return "ckpt-%012d.pt" % step


def _fsync_dir(directory):
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(directory, name, chunks):
    tmp = os.path.join(directory, f".{name}.tmp.{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(directory, name))
        _fsync_dir(directory)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise SiaError(IO_ERROR, f"{directory}: cannot write {name}: "
                       f"{e.strerror or e}") from None


def _read_latest_name(directory):
    try:
        with open(os.path.join(directory, LATEST), "rb") as f:
            text = f.read(4096)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise SiaError(NO_INPUT, f"{directory}/{LATEST}: {e.strerror}") from None
    name = text.decode("utf-8", "replace").strip()
    if not _NAME.match(name):
        raise SiaError(DATA, f"{directory}/{LATEST}: does not name a checkpoint "
                       f"file ({name[:60]!r})")
    return name


def save(directory, step, payload):
    """Writes ``payload`` as the checkpoint at ``step``; returns its path."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise SiaError(CANT_CREATE, f"{directory}: cannot create the checkpoint "
                       f"directory: {e.strerror}") from None
    try:
        previous = _read_latest_name(directory)
    except SiaError:
        previous = None  # a damaged latest is about to be replaced
    name = checkpoint_name(step)
    header = b"%s %d %d %08x\n" % (_MAGIC, FORMAT_VERSION, len(payload),
                                    zlib.crc32(payload))
    _write_atomic(directory, name, [header, payload])
    _write_atomic(directory, LATEST, [(name + "\n").encode()])
    _prune(directory, keep={name, previous})
    return os.path.join(directory, name)


def _prune(directory, keep):
    for entry in os.listdir(directory):
        temp = _TEMP.match(entry)
        stale = (_NAME.match(entry) and entry not in keep) or (
            temp and int(temp.group(1)) != os.getpid())
        if stale:
            try:
                os.unlink(os.path.join(directory, entry))
            except OSError:
                pass


def load_latest(directory):
    """(path, payload) of the checkpoint ``latest`` names, or None without one."""
    name = _read_latest_name(directory)
    if name is None:
        return None
    path = os.path.join(directory, name)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SiaError(NO_INPUT, f"{path}: the checkpoint latest names is "
                       f"unreadable: {e.strerror}") from None
    end = data.find(b"\n", 0, 128)
    fields = data[:end].split(b" ") if end > 0 else []
    if len(fields) != 4 or fields[0] != _MAGIC:
        raise SiaError(DATA, f"{path}: corrupt checkpoint: no sia header")
    try:
        version, length, crc = int(fields[1]), int(fields[2]), int(fields[3], 16)
    except ValueError:
        raise SiaError(DATA, f"{path}: corrupt checkpoint: bad header") from None
    if version != FORMAT_VERSION:
        raise SiaError(DATA, f"{path}: checkpoint format {version}, this library "
                       f"reads {FORMAT_VERSION}")
    payload = data[end + 1:]
    if len(payload) != length:
        raise SiaError(DATA, f"{path}: corrupt checkpoint: {len(payload)} of "
                       f"{length} payload bytes (truncated)")
    if zlib.crc32(payload) != crc:
        raise SiaError(DATA, f"{path}: corrupt checkpoint: checksum mismatch")
    return path, payload
