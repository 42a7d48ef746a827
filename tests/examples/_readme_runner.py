"""Runs one README code block as a script in a fresh interpreter, the way a
reader pastes it, with ``minikeras.datasets`` reading the tiny dataset files
of conftest.py instead of downloading the real ones.

    python _readme_runner.py SETTINGS.json BLOCK.py

SETTINGS.json lists ``[module, attribute, value]`` triples (the tiny files'
sample counts and checksums, no known local copies); the network is off, as
in conftest.py's ``offline_datasets``. Nothing else changes: the block's own
code runs unmodified, as ``__main__``.
"""
import importlib
import json
import runpy
import sys
import urllib.error


def _offline_download(url, path):
    raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")


def main(settings_path, block_path):
    with open(settings_path) as settings:
        for module_name, attribute, value in json.load(settings):
            setattr(importlib.import_module(module_name), attribute, value)
    importlib.import_module("minikeras.datasets._files")._download = _offline_download
    runpy.run_path(block_path, run_name="__main__")


if __name__ == "__main__":
    main(*sys.argv[1:])
