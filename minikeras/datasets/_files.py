"""Finding, downloading and checking dataset files.

A dataset file is looked for, in this order:

1. in the cache directory, ``~/.minikeras/datasets`` (``$MINIKERAS_HOME/datasets``
   when the ``MINIKERAS_HOME`` environment variable is set);
2. in known local copies, such as the files a Debian package installs or
   Keras's own cache (``~/.keras/datasets``);
3. at its published URLs, downloaded into the cache directory.

How each copy is trusted:

* **Downloads are verified strictly.** A download is written to a temporary
  file beside its final name, its checksum is compared with the published one
  and its format is read completely; only then is it renamed into place with
  ``os.replace``. A checksum mismatch discards the file and raises
  `CorruptDatasetError` (after trying the other URLs), so neither a crash nor a
  bad download ever leaves a partial file under the final name.
* **Files already in the cache are verified by their format.** The reader
  parses the whole file and checks its structure and its image counts
  (60,000/10,000 for the MNISTs, 50,000/10,000 for CIFAR-10). A file that
  fails is reported with a warning and downloaded again; it is never used. A
  file that parses completely but whose checksum differs from the published
  one is used, with a warning: such a file is usually a faithful copy made
  another way (for example a CIFAR-10 archive rebuilt by a script, or a
  re-compressed gzip), and rejecting complete, well-formed data would only
  force a download that may be impossible.
* **Known local copies are verified by their format only.** Distributions
  re-package the files (Debian's Fashion-MNIST gzip streams differ byte for
  byte from Zalando's), and their integrity is the package manager's job.

When no copy can be used, one `DatasetNotFoundError` says which file to put
where and where it is published, chained to the underlying network error.

Tests replace `_download` (the only function here that touches the network)
with a fake, so they never reach the network.
"""
import dataclasses
import hashlib
import http.client
import os
import urllib.request
import uuid
import warnings
from pathlib import Path
from typing import Callable, Iterable, Optional, Tuple, TypeVar

from minikeras.datasets._errors import CorruptDatasetError, DatasetNotFoundError

#: Seconds a download may wait on the network for one connection or read.
DOWNLOAD_TIMEOUT_SECONDS = 15

_CHUNK_BYTES = 1 << 20
_Parsed = TypeVar("_Parsed")


@dataclasses.dataclass(frozen=True)
class RemoteFile:
    """One published dataset file.

    Attributes:
        dataset: Human-readable dataset name, used in messages ("Fashion-MNIST").
        name: File name in the cache directory ("mnist.npz").
        urls: URLs it is published at, tried in order.
        checksum: ``(algorithm, hex digest)`` of the published file, an
            algorithm that ``hashlib.new`` knows, or None when no authoritative
            checksum exists.
        subdir: Folder inside the cache directory ("" for the top level).
        siblings: Other files of the same dataset that live beside it, named
            in the not-found message so a user installing by hand gets them all.
    """

    dataset: str
    name: str
    urls: Tuple[str, ...]
    checksum: Optional[Tuple[str, str]] = None
    subdir: str = ""
    siblings: Tuple[str, ...] = ()


def cache_dir() -> Path:
    """Returns the dataset cache directory (it may not exist yet).

    Returns:
        ``$MINIKERAS_HOME/datasets`` when ``MINIKERAS_HOME`` is set and not
        empty, else ``~/.minikeras/datasets``.
    """
    home = os.environ.get("MINIKERAS_HOME") or os.path.join("~", ".minikeras")
    return Path(home).expanduser() / "datasets"


def cache_path(remote: RemoteFile) -> Path:
    """Returns the full path of ``remote`` in the cache directory."""
    return cache_dir() / remote.subdir / remote.name


def file_digest(path, algorithm: str) -> str:
    """Returns the hex digest of a file's bytes.

    Args:
        path: The file.
        algorithm: A name ``hashlib.new`` accepts ("sha256", "md5").
    """
    digest = hashlib.new(algorithm)
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url: str, path) -> None:
    """Downloads ``url`` into ``path``, showing a tqdm progress bar.

    The only function of the package that touches the network; tests replace
    it. It writes wherever it is told: making that write atomic is the
    caller's job.

    Args:
        url: What to download.
        path: Where to write it (created or overwritten).

    Raises:
        OSError: Network failures (``urllib.error.URLError`` and its
            ``HTTPError``, timeouts), and ``ConnectionError`` when the server
            sends fewer bytes than it announced.
        http.client.HTTPException: A malformed or cut-off HTTP response.
    """
    from tqdm.auto import tqdm  # imported here: only downloads need it

    request = urllib.request.Request(url, headers={"User-Agent": "minikeras"})
    with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
        length = response.headers.get("Content-Length")
        expected = int(length) if length and length.isdigit() else None
        received = 0
        with open(path, "wb") as out, tqdm(
            total=expected, unit="B", unit_scale=True, unit_divisor=1024,
            desc=url.rsplit("/", 1)[-1],
        ) as bar:
            for chunk in iter(lambda: response.read(_CHUNK_BYTES), b""):
                out.write(chunk)
                received += len(chunk)
                bar.update(len(chunk))
            out.flush()
            os.fsync(out.fileno())  # the data must be on disk before the rename
    if expected is not None and received != expected:
        raise ConnectionError(f"{url}: the server announced {expected} bytes but sent {received}")


def _checksum_mismatch(path, remote: RemoteFile) -> Optional[str]:
    """Returns a sentence describing a checksum mismatch, or None if it matches or is unknown."""
    if remote.checksum is None:
        return None
    algorithm, expected = remote.checksum
    actual = file_digest(path, algorithm)
    if actual == expected.lower():
        return None
    return f"its {algorithm} is {actual}, the published file's is {expected}"


def _parse(parse, path):
    """``parse(path)``, any failure of which means the file is unusable.

    A parser raises CorruptDatasetError for what it checks; anything else a
    damaged file makes it raise (a ValueError from NumPy, a KeyError, a
    MemoryError from an absurd header) is the same case, so the caller's
    fallback (the next copy, a new download) happens for every one.
    """
    try:
        return parse(path)
    except CorruptDatasetError:
        raise
    except Exception as error:  # noqa: BLE001  (see the docstring)
        raise CorruptDatasetError(f"{path}: cannot be parsed ({type(error).__name__}: {error})") from error


def fetch(
    remote: RemoteFile,
    parse: Callable[[Path], _Parsed],
    local_copies: Iterable = (),
) -> _Parsed:
    """Finds, checks and reads one dataset file; see the module docstring.

    Args:
        remote: The file to get.
        parse: Reads a file completely and returns its contents, raising
            `CorruptDatasetError` for anything truncated, corrupt or in the
            wrong format. It is the format check, so it must read everything.
        local_copies: Paths (``~`` is expanded) of other copies to use, in
            order, when the cache has no usable one.

    Returns:
        What ``parse`` returns for the first usable copy.

    Raises:
        DatasetNotFoundError: No usable copy exists and no download succeeded
            for a network reason.
        CorruptDatasetError: Downloads succeeded but failed their checksum or
            format check.
    """
    target = cache_path(remote)
    rejected = []  # "path: reason" for every copy that was found but unusable
    if target.is_file():
        try:
            contents = _parse(parse, target)
        except CorruptDatasetError as error:
            warnings.warn(f"{target} is unusable ({error}); ignoring it and looking for "
                          "another copy or downloading it again.", stacklevel=3)
            rejected.append(f"{target}: {error}")
        else:
            mismatch = _checksum_mismatch(target, remote)
            if mismatch:
                warnings.warn(
                    f"{target} is not the published file ({mismatch}), but it is complete and "
                    "well formed, so it is used.", stacklevel=3)
            return contents
    searched = []
    for copy in local_copies:
        path = Path(copy).expanduser()
        searched.append(str(path))
        if not path.is_file():
            continue
        try:
            return _parse(parse, path)
        except CorruptDatasetError as error:
            warnings.warn(f"{path} is unusable ({error}); ignoring it.", stacklevel=3)
            rejected.append(f"{path}: {error}")
    return _download_into_cache(remote, target, parse, searched, rejected)


def _download_into_cache(remote, target, parse, searched, rejected):
    """Tries each URL of ``remote``; returns the parsed contents of the first good download."""
    network_errors, bad_downloads = [], []
    last_error = None
    for url in remote.urls:
        temporary = None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            # A unique name beside the target, so the final rename is atomic;
            # not tempfile.mkstemp, whose 0600 mode would ignore the umask.
            temporary = str(target.parent / f".{target.name}.{uuid.uuid4().hex[:12]}.part")
            _download(url, temporary)
            mismatch = _checksum_mismatch(temporary, remote)
            if mismatch:
                raise CorruptDatasetError(f"the download is corrupt: {mismatch}")
            contents = _parse(parse, Path(temporary))
            os.replace(temporary, target)
            temporary = None
            return contents
        except CorruptDatasetError as error:
            bad_downloads.append(f"{url}: {error}")
            last_error = error
        except (OSError, http.client.HTTPException) as error:
            network_errors.append(f"{url}: {type(error).__name__}: {error}")
            last_error = error
        finally:
            if temporary is not None and os.path.exists(temporary):
                os.remove(temporary)
    message = _not_found_message(remote, target, searched, rejected, network_errors, bad_downloads)
    if bad_downloads:
        raise CorruptDatasetError(message) from last_error
    raise DatasetNotFoundError(message) from last_error


def _not_found_message(remote, target, searched, rejected, network_errors, bad_downloads):
    """Builds the one message that tells a user how to install ``remote`` by hand."""
    lines = [f"Could not get the {remote.dataset} file {remote.name!r}."]
    if rejected:
        lines.append("Copies found but unusable (they were not used):")
        lines += [f"  {entry}" for entry in rejected]
    if searched:
        lines.append("Also looked for local copies at: " + ", ".join(searched) + ".")
    if bad_downloads:
        lines.append("Downloads that failed their checks (discarded):")
        lines += [f"  {entry}" for entry in bad_downloads]
    if network_errors:
        lines.append("Downloads that failed:")
        lines += [f"  {entry}" for entry in network_errors]
    lines.append(f"To install it by hand, put the file at:\n  {target}")
    lines.append("It is published at: " + ", ".join(remote.urls))
    if remote.checksum is not None:
        lines[-1] += f" ({remote.checksum[0]} {remote.checksum[1]})"
    if remote.siblings:
        lines.append(
            f"{remote.dataset} also needs, in the same folder: " + ", ".join(remote.siblings))
    return "\n".join(lines)
