"""utils.get_file: cache first, checksums, a clear offline error, safe extraction."""
import hashlib
import io
import tarfile
import urllib.error
import zipfile

import pytest

from minikeras.datasets import _files
from minikeras.datasets._errors import CorruptDatasetError, DatasetNotFoundError
from minikeras.utils import get_file

URL = "https://example.invalid/data/words.txt"
PAYLOAD = b"alpha beta gamma\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path / "mk"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    return tmp_path


@pytest.fixture
def served(monkeypatch):
    """URL -> bytes the fake network answers with; records every request."""
    table, calls = {}, []

    def download(url, path):
        calls.append(url)
        if url not in table:
            raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")
        with open(path, "wb") as out:
            out.write(table[url])

    monkeypatch.setattr(_files, "_download", download)
    table["calls"] = calls
    return table


def test_downloads_once_then_uses_the_cache(home, served):
    served[URL] = PAYLOAD
    path = get_file(origin=URL, file_hash=hashlib.sha256(PAYLOAD).hexdigest())
    assert path == str(home / "mk" / "datasets" / "words.txt")
    assert open(path, "rb").read() == PAYLOAD
    del served[URL]  # offline from now on
    assert get_file("words.txt", URL, file_hash=hashlib.sha256(PAYLOAD).hexdigest()) == path
    assert served["calls"] == [URL]


def test_md5_cache_subdir_and_cache_dir(home, served):
    served[URL] = PAYLOAD
    path = get_file("w.txt", URL, md5_hash=hashlib.md5(PAYLOAD).hexdigest(), cache_subdir="texts",
                    cache_dir=str(home / "elsewhere"))
    assert path == str(home / "elsewhere" / "texts" / "w.txt")


def test_offline_without_a_copy_says_where_to_put_the_file(home, served):
    with pytest.raises(DatasetNotFoundError) as error:
        get_file("words.txt", URL, file_hash="ab" * 32)
    message = str(error.value)
    assert URL in message and str(home / "mk" / "datasets" / "words.txt") in message and "ab" * 32 in message
    assert not list((home / "mk" / "datasets").glob("*.part"))


def test_keras_cache_copy_is_used_offline(home, served):
    keras_copy = home / "user" / ".keras" / "datasets" / "words.txt"
    keras_copy.parent.mkdir(parents=True)
    keras_copy.write_bytes(PAYLOAD)
    assert get_file("words.txt", URL, file_hash=hashlib.sha256(PAYLOAD).hexdigest()) == str(keras_copy)
    assert served["calls"] == []


def test_bad_cached_copy_is_downloaded_again(home, served):
    cached = home / "mk" / "datasets" / "words.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"truncated")
    served[URL] = PAYLOAD
    with pytest.warns(UserWarning, match="does not match"):
        path = get_file("words.txt", URL, file_hash=hashlib.sha256(PAYLOAD).hexdigest())
    assert open(path, "rb").read() == PAYLOAD


def test_corrupt_download_is_discarded(home, served):
    served[URL] = b"something else"
    with pytest.raises(CorruptDatasetError, match="incomplete or corrupt"):
        get_file("words.txt", URL, file_hash=hashlib.sha256(PAYLOAD).hexdigest())
    assert not (home / "mk" / "datasets" / "words.txt").exists()
    assert not list((home / "mk" / "datasets").glob("*.part"))


def test_force_download(home, served):
    served[URL] = PAYLOAD
    get_file("words.txt", URL)
    served[URL] = b"new"
    assert open(get_file("words.txt", URL, force_download=True), "rb").read() == b"new"


def _tar(members):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as bundle:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, data in members.items():
            bundle.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize("pack", [_tar, _zip])
def test_extract_returns_the_folder(home, served, pack):
    served["https://example.invalid/bundle"] = pack({"bundle/a.txt": b"A", "bundle/b/c.txt": b"C"})
    folder = get_file("bundle.arc", "https://example.invalid/bundle", extract=True)
    assert folder.endswith("bundle.arc_extracted")
    assert open(f"{folder}/bundle/b/c.txt", "rb").read() == b"C"


def test_untar_keeps_keras_s_old_layout(home, served):
    served["https://example.invalid/t.tar.gz"] = _tar({"pack/x.txt": b"X"})
    path = get_file("pack", "https://example.invalid/t.tar.gz", untar=True)
    assert path == str(home / "mk" / "datasets" / "pack")
    assert open(f"{path}/x.txt", "rb").read() == b"X"


@pytest.mark.parametrize("pack", [_tar, _zip])
def test_unsafe_archive_members_are_refused(home, served, pack):
    served["https://example.invalid/evil"] = pack({"../escaped.txt": b"!"})
    with pytest.raises(CorruptDatasetError, match="outside"):
        get_file("evil", "https://example.invalid/evil", extract=True)
    assert not (home / "mk" / "datasets" / "escaped.txt").exists()


def test_argument_errors(home, served):
    with pytest.raises(ValueError, match="origin"):
        get_file("x")
    with pytest.raises(ValueError, match="hash_algorithm"):
        get_file("x", URL, file_hash="00", hash_algorithm="crc32")
