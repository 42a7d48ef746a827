"""Atomic file writes: write a temporary file beside the target, then rename.

``os.replace`` is atomic on POSIX and Windows when both paths are on the same
file system, which is why the temporary file lives in the target's folder.
A crash (or an exception) while writing leaves the previous file untouched
and removes the temporary file.

The temporary file is named ``.<target name>.minikeras-tmp-<pid>-<random>``:
tied to its target and to the process writing it. A process killed
mid-write (kill -9 runs no cleanup) leaves its temporary behind; the next
save to the same target removes those whose process is gone.
"""
import contextlib
import errno
import os
import secrets


_TEMPORARY_TAG = ".minikeras-tmp-"


def temporary_prefix(basename):
    """The name every temporary file for the target ``basename`` starts with."""
    return f".{basename}{_TEMPORARY_TAG}"


def _reserve_temporary(directory, basename):
    """Create an empty, uniquely named file in ``directory`` and return its path.

    ``O_EXCL`` makes the name ours alone; mode 0o666 lets the umask decide the
    permissions, as for a file opened normally (``mkstemp`` would force 0o600).
    """
    for _ in range(100):
        name = f"{temporary_prefix(basename)}{os.getpid()}-{secrets.token_hex(4)}"
        path = os.path.join(directory, name)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(descriptor)
        return path
    raise FileExistsError(errno.EEXIST, "Could not create a unique temporary file", directory)


def _process_alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or a platform without signals: keep its file
    return True


def remove_stale_temporaries(directory, basename):
    """Delete the temporary files of earlier saves to ``basename`` whose
    process no longer exists; returns the names removed.

    Files of a live process (another save in progress) are left alone, as
    is anything not named by :func:`temporary_prefix`.
    """
    prefix, removed = temporary_prefix(basename), []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(prefix):
            continue
        pid_text = name[len(prefix):].split("-", 1)[0]
        if not pid_text.isdigit() or _process_alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            os.remove(os.path.join(directory, name))
            removed.append(name)
    return removed


def _fsync_file(path):
    with open(path, "rb+") as handle:
        os.fsync(handle.fileno())


def _fsync_directory(directory):
    # Makes the rename itself durable; not possible (nor needed) on Windows.
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


@contextlib.contextmanager
def atomic_write(filepath, overwrite=True):
    """Context manager giving a temporary path to write; on success it is
    renamed onto ``filepath``, on failure it is deleted.

    Args:
        filepath: the final path.
        overwrite: if False and ``filepath`` exists, raise FileExistsError.

    Yields:
        The temporary path (an existing empty file in the same folder).

    Raises:
        ValueError: an empty path (or one naming no file).
        FileExistsError: ``filepath`` exists and ``overwrite`` is False.
        FileNotFoundError: the folder of ``filepath`` does not exist.
        IsADirectoryError: ``filepath`` is a folder.

    Example:
        >>> with atomic_write("model.h5") as temporary:  # doctest: +SKIP
        ...     with h5py.File(temporary, "w") as f:
        ...         f.attrs["hello"] = "world"
    """
    filepath = os.fsdecode(os.fspath(filepath))
    if not filepath.strip():
        raise ValueError(f"Cannot save to {filepath!r}: expected a file path such as 'model.h5'.")
    if os.path.islink(filepath):
        filepath = os.path.realpath(filepath)  # replace the link's target, keep the link
    if os.path.isdir(filepath):
        raise IsADirectoryError(errno.EISDIR, "Cannot save to a folder; give a file path", filepath)
    if os.path.basename(filepath) in ("", ".", ".."):
        raise ValueError(f"Cannot save to {filepath!r}: it names a folder, expected a file path such as "
                         "'model.h5'.")
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(errno.EEXIST, "File already exists and overwrite=False", filepath)
    directory = os.path.dirname(os.path.abspath(filepath))
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, f"Cannot save: the folder {directory!r} does not exist", filepath)
    remove_stale_temporaries(directory, os.path.basename(filepath))
    temporary = _reserve_temporary(directory, os.path.basename(filepath))
    try:
        if os.path.exists(filepath):
            os.chmod(temporary, os.stat(filepath).st_mode & 0o7777)
        yield temporary
        _fsync_file(temporary)
        os.replace(temporary, filepath)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    _fsync_directory(directory)
