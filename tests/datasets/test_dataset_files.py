"""Tests for minikeras/datasets/_files.py: cache dir, lookup order, downloads, checksums."""
import io
import os
import urllib.error
import warnings
from pathlib import Path

import pytest

from minikeras.datasets import (
    CorruptDatasetError, DatasetError, DatasetNotFoundError, _files, cache_dir)

CONTENT = b"GOOD" * 10
URL = "https://example.invalid/data/thing.bin"
MIRROR = "https://mirror.invalid/thing.bin"


def parse_good(path):
    """A stand-in reader: a file is complete when it holds exactly CONTENT."""
    data = Path(path).read_bytes()
    if data != CONTENT:
        raise CorruptDatasetError(f"{path}: holds {len(data)} bytes, expected {len(CONTENT)}")
    return "parsed"


def remote(build, checksum_of=CONTENT, urls=(URL,), subdir=""):
    return _files.RemoteFile(
        dataset="Thing", name="thing.bin", urls=urls, subdir=subdir,
        checksum=None if checksum_of is None else ("sha256", build.sha256(checksum_of)))


def test_cache_dir_follows_minikeras_home(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path / "elsewhere"))
    assert cache_dir() == tmp_path / "elsewhere" / "datasets"


def test_cache_dir_defaults_to_home_dot_minikeras(monkeypatch, tmp_path):
    monkeypatch.delenv("MINIKERAS_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == tmp_path / ".minikeras" / "datasets"


def test_errors_are_runtime_errors():
    assert issubclass(DatasetNotFoundError, DatasetError)
    assert issubclass(CorruptDatasetError, DatasetError)
    assert issubclass(DatasetError, RuntimeError)


def test_good_cached_file_is_used_without_network(build, isolated_datasets, downloads):
    build.write(isolated_datasets / "thing.bin", CONTENT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _files.fetch(remote(build), parse_good) == "parsed"
    assert downloads.calls == []


def test_cached_file_in_subdir(build, isolated_datasets, downloads):
    build.write(isolated_datasets / "sub" / "thing.bin", CONTENT)
    assert _files.fetch(remote(build, subdir="sub"), parse_good) == "parsed"


def test_complete_cached_file_with_other_checksum_is_used_with_warning(
        build, isolated_datasets, downloads):
    build.write(isolated_datasets / "thing.bin", CONTENT)
    with pytest.warns(UserWarning, match="not the published file.*sha256"):
        assert _files.fetch(remote(build, checksum_of=b"other"), parse_good) == "parsed"
    assert downloads.calls == []


def test_corrupt_cached_file_is_downloaded_again(build, isolated_datasets, downloads):
    cached = build.write(isolated_datasets / "thing.bin", CONTENT[:7])
    downloads.serve(URL, CONTENT)
    with pytest.warns(UserWarning, match="unusable.*downloading it again"):
        assert _files.fetch(remote(build), parse_good) == "parsed"
    assert downloads.calls == [URL]
    assert cached.read_bytes() == CONTENT
    assert build.no_partial_files(isolated_datasets)


def test_corrupt_cached_file_offline_is_never_used(build, isolated_datasets):
    cached = build.write(isolated_datasets / "thing.bin", CONTENT[:7])
    with pytest.warns(UserWarning), pytest.raises(DatasetNotFoundError) as raised:
        _files.fetch(remote(build), parse_good)
    message = str(raised.value)
    assert "unusable" in message and str(cached) in message and "holds 7 bytes" in message


def test_download_goes_into_cache(build, isolated_datasets, downloads):
    downloads.serve(URL, CONTENT)
    old_umask = os.umask(0o022)
    try:
        assert _files.fetch(remote(build), parse_good) == "parsed"
    finally:
        os.umask(old_umask)
    assert (isolated_datasets / "thing.bin").read_bytes() == CONTENT
    assert (isolated_datasets / "thing.bin").stat().st_mode & 0o777 == 0o644
    assert build.no_partial_files(isolated_datasets)
    # Second call: served from the cache.
    assert _files.fetch(remote(build), parse_good) == "parsed"
    assert downloads.calls == [URL]


def test_download_with_bad_checksum_raises_and_leaves_nothing(build, isolated_datasets, downloads):
    downloads.serve(URL, CONTENT)
    with pytest.raises(CorruptDatasetError) as raised:
        _files.fetch(remote(build, checksum_of=b"the published bytes"), parse_good)
    message = str(raised.value)
    assert "failed their checks" in message and "sha256" in message and URL in message
    assert build.sha256(CONTENT) in message and build.sha256(b"the published bytes") in message
    assert not (isolated_datasets / "thing.bin").exists()
    assert build.no_partial_files(isolated_datasets)


def test_download_that_fails_format_check_leaves_nothing(build, isolated_datasets, downloads):
    downloads.serve(URL, b"garbage")
    with pytest.raises(CorruptDatasetError, match="holds 7 bytes"):
        _files.fetch(remote(build, checksum_of=None), parse_good)
    assert list(isolated_datasets.iterdir()) == []


def test_dropped_connection_leaves_no_partial_file(build, isolated_datasets, downloads):
    downloads.serve(URL, ConnectionResetError("connection reset by peer"))
    with pytest.raises(DatasetNotFoundError, match="ConnectionResetError") as raised:
        _files.fetch(remote(build), parse_good)
    assert isinstance(raised.value.__cause__, ConnectionResetError)
    assert list(isolated_datasets.iterdir()) == []


def test_falls_back_to_the_next_url(build, isolated_datasets, downloads):
    downloads.serve(MIRROR, CONTENT)
    assert _files.fetch(remote(build, urls=(URL, MIRROR)), parse_good) == "parsed"
    assert downloads.calls == [URL, MIRROR]


def test_bad_first_url_then_good_mirror(build, isolated_datasets, downloads):
    downloads.serve(URL, b"wrong bytes")
    downloads.serve(MIRROR, CONTENT)
    assert _files.fetch(remote(build, urls=(URL, MIRROR)), parse_good) == "parsed"
    assert (isolated_datasets / "thing.bin").read_bytes() == CONTENT


def test_offline_error_says_what_to_put_where(build, isolated_datasets, tmp_path):
    missing_copy = tmp_path / "nowhere" / "thing.bin"
    with pytest.raises(DatasetNotFoundError) as raised:
        _files.fetch(remote(build, urls=(URL, MIRROR)), parse_good, local_copies=[missing_copy])
    message = str(raised.value)
    assert "'thing.bin'" in message
    assert f"put the file at:\n  {isolated_datasets / 'thing.bin'}" in message
    assert URL in message and MIRROR in message and str(missing_copy) in message
    assert build.sha256(CONTENT) in message
    assert isinstance(raised.value.__cause__, urllib.error.URLError)


def test_local_copy_is_used_when_cache_is_empty(build, isolated_datasets, downloads, tmp_path):
    copy = build.write(tmp_path / "system" / "thing.bin", CONTENT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no checksum complaint for a local copy
        assert _files.fetch(remote(build, checksum_of=b"x"), parse_good,
                            local_copies=[tmp_path / "absent", copy]) == "parsed"
    assert downloads.calls == []
    assert not (isolated_datasets / "thing.bin").exists()


def test_corrupt_local_copy_is_skipped(build, isolated_datasets, downloads, tmp_path):
    copy = build.write(tmp_path / "system" / "thing.bin", b"bad")
    downloads.serve(URL, CONTENT)
    with pytest.warns(UserWarning, match="ignoring it"):
        assert _files.fetch(remote(build), parse_good, local_copies=[copy]) == "parsed"
    assert copy.read_bytes() == b"bad"  # never touched


class FakeResponse(io.BytesIO):
    def __init__(self, data, length):
        super().__init__(data)
        self.headers = {} if length is None else {"Content-Length": str(length)}


def test_real_downloader_writes_the_response(monkeypatch, tmp_path, real_download):
    seen = {}

    def fake_urlopen(request, timeout):
        seen["url"], seen["timeout"] = request.full_url, timeout
        return FakeResponse(CONTENT * 1000, len(CONTENT) * 1000)

    monkeypatch.setattr(_files.urllib.request, "urlopen", fake_urlopen)
    target = tmp_path / "out.bin"
    real_download(URL, target)
    assert target.read_bytes() == CONTENT * 1000
    assert seen == {"url": URL, "timeout": _files.DOWNLOAD_TIMEOUT_SECONDS}
    assert _files.DOWNLOAD_TIMEOUT_SECONDS <= 30


def test_real_downloader_detects_a_short_response(monkeypatch, tmp_path, real_download):
    monkeypatch.setattr(_files.urllib.request, "urlopen",
                        lambda request, timeout: FakeResponse(CONTENT, len(CONTENT) + 10))
    with pytest.raises(ConnectionError, match="announced 50 bytes but sent 40"):
        real_download(URL, tmp_path / "out.bin")


def test_real_downloader_without_content_length(monkeypatch, tmp_path, real_download):
    monkeypatch.setattr(_files.urllib.request, "urlopen",
                        lambda request, timeout: FakeResponse(CONTENT, None))
    real_download(URL, tmp_path / "out.bin")
    assert (tmp_path / "out.bin").read_bytes() == CONTENT


def test_file_digest(build, tmp_path):
    path = build.write(tmp_path / "x", CONTENT)
    assert _files.file_digest(path, "sha256") == build.sha256(CONTENT)
    assert _files.file_digest(path, "md5") == build.md5(CONTENT)
    assert os.path.getsize(path) == len(CONTENT)


@pytest.mark.parametrize("failure", [ValueError("cannot reshape"), KeyError("data"), MemoryError(),
                                     IndexError("out of range")])
def test_any_parse_failure_of_a_cached_file_falls_back_to_a_download(build, isolated_datasets, downloads,
                                                                    failure):
    # A reader's raw error on a damaged file is a "corrupt file" case too.
    build.write(isolated_datasets / "thing.bin", CONTENT[:7])
    downloads.serve(URL, CONTENT)

    def parse_raising(path):
        if Path(path).read_bytes() != CONTENT:
            raise failure
        return "parsed"

    with pytest.warns(UserWarning, match=f"unusable.*cannot be parsed \\({type(failure).__name__}"):
        assert _files.fetch(remote(build), parse_raising) == "parsed"
    assert downloads.calls == [URL]
