"""get_file: a file from a URL, kept in a local cache (``keras.utils.get_file``).

Offline first: a cached copy whose checksum matches (or that has no checksum
to match) is returned without touching the network; so is a copy Keras
already downloaded (``~/.keras/<cache_subdir>/<fname>``). Only then is the
file downloaded, into a temporary name beside its final one, checked, and
renamed into place. On a machine without network the error says where to
put the file by hand.
"""
import os
import tarfile
import uuid
import warnings
import zipfile
from pathlib import Path

from minikeras.datasets import _files
from minikeras.datasets._errors import CorruptDatasetError, DatasetNotFoundError


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None, force_download=False):
    """Returns the local path of ``origin``, downloading it on first use.

    Args:
        fname: the file name in the cache (default: the last part of ``origin``).
        origin: the URL.
        untar: Keras's older spelling of ``extract`` for ``.tar.gz`` files:
            the archive is saved as ``fname + ".tar.gz"``, extracted beside it,
            and ``<cache>/<fname>`` is returned.
        md5_hash: Keras's older spelling of ``file_hash`` with MD5.
        file_hash: the expected SHA-256 or MD5 hex digest, or None.
        cache_subdir: the folder inside the cache directory (an absolute path
            is used as is).
        hash_algorithm: ``"sha256"``, ``"md5"`` or ``"auto"`` (by the length
            of ``file_hash``).
        extract: extract a tar or zip archive into ``<path>_extracted`` and
            return that folder.
        archive_format: ``"auto"``, ``"tar"``, ``"zip"``, or a list of them.
        cache_dir: the cache directory (default ``$MINIKERAS_HOME`` or
            ``~/.minikeras``).
        force_download: download even when a good copy is cached.

    Returns:
        The path of the file (or of the extracted folder) as a string.

    Raises:
        ValueError: no ``origin``, or an unknown ``hash_algorithm``.
        DatasetNotFoundError: no usable copy and the download failed; the
            message says where to put the file by hand.
        CorruptDatasetError: the download does not match ``file_hash``, or
            an archive is malformed or holds unsafe paths.
    """
    if not origin:
        raise ValueError("get_file expects an origin URL, received none.")
    fname = fname or os.path.basename(origin.split("?", 1)[0].rstrip("/"))
    if not fname:
        raise ValueError(f"get_file: cannot name the file from origin {origin!r}; give fname.")
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    algorithm = _algorithm(hash_algorithm, file_hash)
    home = Path(cache_dir).expanduser() if cache_dir else _files.cache_dir().parent
    folder = Path(cache_subdir).expanduser() if os.path.isabs(str(cache_subdir)) else home / cache_subdir
    target = folder / (fname + ".tar.gz" if untar else fname)
    path = None if force_download else _usable_copy(target, file_hash, algorithm, cache_subdir)
    if path is None:
        path = _download(origin, target, file_hash, algorithm)
    if untar:
        _extract(path, folder, "tar")
        return str(folder / fname)
    if extract:
        destination = Path(str(path) + "_extracted")
        if force_download or not destination.is_dir():
            _extract(path, destination, archive_format)
        return str(destination)
    return str(path)


def _algorithm(hash_algorithm, file_hash):
    if hash_algorithm == "auto":
        return "sha256" if file_hash is not None and len(file_hash) == 64 else "md5"
    if hash_algorithm not in ("sha256", "md5"):
        raise ValueError(f"get_file: hash_algorithm must be 'auto', 'sha256' or 'md5', received {hash_algorithm!r}.")
    return hash_algorithm


def _matches(path, file_hash, algorithm):
    return file_hash is None or _files.file_digest(path, algorithm) == file_hash.lower()


def _usable_copy(target, file_hash, algorithm, cache_subdir):
    """The cached file, or Keras's cached copy, when it exists and matches."""
    keras_copy = Path("~/.keras").expanduser() / str(cache_subdir) / target.name
    for candidate in (target, keras_copy):
        if candidate.is_file():
            if _matches(candidate, file_hash, algorithm):
                return candidate
            warnings.warn(f"{candidate} does not match its {algorithm} checksum {file_hash}; "
                          "it is ignored and the file downloaded again.", stacklevel=4)
    return None


def _download(origin, target, file_hash, algorithm):
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.parent / f".{target.name}.{uuid.uuid4().hex[:12]}.part"
    try:
        try:
            _files._download(origin, str(temporary))
        except OSError as error:
            hint = f" ({algorithm} {file_hash})" if file_hash else ""
            raise DatasetNotFoundError(
                f"get_file could not download {origin} ({type(error).__name__}: {error}) and no usable copy "
                f"is cached. Without network, put the file{hint} at:\n  {target}") from error
        if not _matches(temporary, file_hash, algorithm):
            raise CorruptDatasetError(
                f"get_file: the download of {origin} is incomplete or corrupt: its {algorithm} is "
                f"{_files.file_digest(temporary, algorithm)}, expected {file_hash}.")
        os.replace(temporary, target)
        return target
    finally:
        if temporary.exists():
            temporary.unlink()


def _extract(archive, destination, archive_format):
    """Extracts a tar or zip archive, refusing members that would land outside ``destination``."""
    formats = [archive_format] if isinstance(archive_format, str) else list(archive_format or [])
    if "auto" in formats:
        formats = ["tar", "zip"]
    destination = Path(destination)
    root = destination.resolve()
    if "tar" in formats and tarfile.is_tarfile(archive):
        with tarfile.open(archive) as bundle:
            members = bundle.getmembers()
            for member in members:
                _check_inside(root, member.name, archive)
                if member.issym() or member.islnk() or member.isdev():
                    raise CorruptDatasetError(f"{archive}: refusing link or device member {member.name!r}.")
            destination.mkdir(parents=True, exist_ok=True)
            bundle.extractall(destination, members=members)
        return
    if "zip" in formats and zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as bundle:
            for name in bundle.namelist():
                _check_inside(root, name, archive)
            destination.mkdir(parents=True, exist_ok=True)
            bundle.extractall(destination)
        return
    raise CorruptDatasetError(f"{archive} is not a {' or '.join(formats)} archive.")


def _check_inside(root, name, archive):
    if os.path.isabs(name) or not (root / name).resolve().is_relative_to(root):
        raise CorruptDatasetError(f"{archive}: refusing member {name!r}, which points outside the folder.")
