"""Checkpoint files: atomic, checksummed, named by ``latest``.

Layout of a checkpoint directory (sia-worker(7), FILES)::

    latest                  one line: the name of the current checkpoint
    ckpt-NNNNNNNNNNNN.pt    the checkpoint at step N
    generation              one line: the newest generation (SIA_ROUND) sia-run
                            started on the job; a writer of an older one is stale
    finished                one line: the generation that finished (sia-run's)
    .lock                   flock(2)ed while a writer checks ``generation`` and
                            writes, and while sia-run raises it

A checkpoint file is a header line ``SIACKPT-PY <version> <length> <crc32>``
followed by the payload (bytes the caller serialised).

Promises:
  * :func:`save` writes the file to a temporary name in the directory, fsyncs
    it, renames it into place and fsyncs the directory; then replaces
    ``latest`` the same way.  A crash at any point leaves ``latest`` naming a
    complete checkpoint (or no ``latest``).  The one ``latest`` names and the
    one it named before are kept; older checkpoints and the temporary files of
    dead writers are removed.  All of it holds the directory's lock and happens
    only while no newer generation has started (else status 75, nothing
    written), so a stale writer never moves ``latest`` or removes a file.
  * :func:`load_latest` returns None when there is no ``latest``.  When the
    file ``latest`` names is missing, truncated or fails its checksum, it
    returns the newest intact other checkpoint and says so through ``warn``;
    with none intact it raises (66 for a missing file, 65 for a damaged one or
    a malformed ``latest``) -- never a silent fresh start.
Not thread-safe: one writer per directory (rank 0).
"""

import contextlib
import fcntl
import os
import re
import zlib

from sia.status import CANT_CREATE, DATA, IO_ERROR, NO_INPUT, PREEMPTED, SiaError

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


@contextlib.contextmanager
def _locked(directory):
    """Holds ``directory``/.lock (waits for it)."""
    try:
        fd = os.open(os.path.join(directory, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise SiaError(CANT_CREATE, f"{directory}/.lock: {e.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def newest_generation(directory):
    """The generation ``directory``/generation names; 0 without one."""
    try:
        with open(os.path.join(directory, "generation"), "rb") as f:
            return int(f.read(64).split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def save(directory, step, payload, generation=0):
    """Writes ``payload`` as the checkpoint at ``step``; returns its path.

    ``generation`` is the writer's SIA_ROUND (0: not started by sia-run, never
    fenced)."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise SiaError(CANT_CREATE, f"{directory}: cannot create the checkpoint "
                       f"directory: {e.strerror}") from None
    name = checkpoint_name(step)
    header = b"%s %d %d %08x\n" % (_MAGIC, FORMAT_VERSION, len(payload),
                                    zlib.crc32(payload))
    with _locked(directory):
        newest = newest_generation(directory)
        if generation > 0 and newest > generation:
            raise SiaError(PREEMPTED, f"{directory}: generation {newest} of this job "
                           f"has started; this writer (generation {generation}) is "
                           "stale and leaves the checkpoints alone")
        try:
            previous = _read_latest_name(directory)
        except SiaError:
            previous = None  # a damaged latest is about to be replaced
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


def load_latest(directory, warn=None):
    """(path, payload) of the checkpoint ``latest`` names, or None without one.

    When that file is missing or damaged: the newest intact other checkpoint,
    ``warn`` (a callable, or None) told why."""
    name = _read_latest_name(directory)
    if name is None:
        return None
    try:
        return _read_checkpoint(os.path.join(directory, name))
    except SiaError as damaged:
        others = sorted((e for e in os.listdir(directory)
                         if _NAME.match(e) and e != name), reverse=True)
        for other in others:
            try:
                found = _read_checkpoint(os.path.join(directory, other))
            except SiaError:
                continue
            if warn:
                warn(f"{damaged.message}; restoring the newest intact checkpoint, "
                     f"{other}, instead")
            return found
        raise


def _read_checkpoint(path):
    """(path, payload) of one checkpoint file, checked."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SiaError(NO_INPUT, f"{path}: the checkpoint is "
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
