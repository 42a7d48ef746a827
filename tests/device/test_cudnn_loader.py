"""device/cudnn.py's library loader finds the cuDNN that the gpu extras
install: the wheels nvidia-cudnn-cu12 / nvidia-cudnn-cu13 (9.28, read from
the real wheels) put the library in ``nvidia/cudnn/lib/libcudnn.so.9`` under
site-packages, with no ``__init__.py`` (``nvidia`` and ``nvidia.cudnn`` are
namespace packages), beside ``libcudnn_graph.so.9`` and the other parts
that libcudnn.so.9 opens through its ``$ORIGIN`` rpath.

Each test builds that layout in ``tmp_path`` and puts it on ``sys.path``,
with CUDA's own locator (``cuda.pathfinder``) made unavailable, so only the
wheel's folder can be what the loader finds."""
import shutil
import subprocess
import sys

import pytest

from minikeras.device import cudnn

WHEEL_LIBRARIES = ("libcudnn.so.9", "libcudnn_adv.so.9", "libcudnn_cnn.so.9", "libcudnn_graph.so.9",
                   "libcudnn_heuristic.so.9", "libcudnn_ops.so.9")
FAKE_CUDNN = "#include <stddef.h>\nsize_t cudnnGetVersion(void) { return VERSION; }\n" \
             "const char *cudnnGetErrorString(int status) { return \"fake\"; }\n"
# Every other function the loader declares (cudnn.SIGNATURES) exists, returning an error status.
FAKE_CUDNN += "".join(f"int {name}(void) {{ return 1; }}\n" for name in cudnn.SIGNATURES
                      if name not in ("cudnnGetVersion", "cudnnGetErrorString"))


@pytest.fixture
def wheel_site(tmp_path, monkeypatch):
    """A site-packages folder laid out as the installed wheel, first on sys.path."""
    site = tmp_path / "site-packages"
    library_folder = site / "nvidia" / "cudnn" / "lib"
    library_folder.mkdir(parents=True)
    for name in WHEEL_LIBRARIES:
        (library_folder / name).write_bytes(b"")
    monkeypatch.syspath_prepend(str(site))
    for module in [name for name in sys.modules if name == "nvidia" or name.startswith("nvidia.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "cuda.pathfinder", None)  # `from cuda.pathfinder import ...` fails
    cudnn.load.cache_clear()
    yield library_folder
    cudnn.load.cache_clear()


def test_the_wheels_library_is_a_candidate_before_the_loaders_search_path(wheel_site):
    candidates = list(cudnn._candidates())
    assert candidates[0] == str(wheel_site / "libcudnn.so.9")
    # Only the main library is opened by path: its parts (libcudnn_graph.so.9 and the
    # others) are opened by cuDNN itself, through its $ORIGIN rpath.
    assert all("libcudnn_" not in path for path in candidates)
    assert candidates[-1] == "libcudnn.so.9"


def _compile_fake_cudnn(path, version):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build a stand-in libcudnn.so.9")
    source = path.parents[4] / "fake_cudnn.c"  # outside the library folder the loader lists
    source.write_text(FAKE_CUDNN.replace("VERSION", str(version)))
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(path), str(source)], check=True)


def test_load_opens_the_wheels_library(wheel_site):
    _compile_fake_cudnn(wheel_site / "libcudnn.so.9", 92801)
    library, reason = cudnn.load()
    assert reason is None
    assert library._name == str(wheel_site / "libcudnn.so.9")
    assert library.cudnnGetVersion() == 92801


def test_load_refuses_a_cudnn_older_than_9_and_says_which(wheel_site):
    _compile_fake_cudnn(wheel_site / "libcudnn.so.9", 8907)
    library, reason = cudnn.load()
    if library is not None:  # a real cuDNN 9 on the loader's path (the last candidate)
        assert library._name == "libcudnn.so.9"
        return
    assert f"{wheel_site / 'libcudnn.so.9'} is cuDNN 8907, not 9" in reason
