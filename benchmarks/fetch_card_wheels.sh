#!/usr/bin/env bash
# Downloads the wheels the GPU machine lacks for the keras-jax rows of
# benchmarks/gpu_models_bench.py: Keras 3.15 and the two of its requirements
# the card's image does not have (namex, optree), for CPython 3.12 on
# manylinux x86-64 (the card's python3). Its other requirements (absl-py,
# numpy, rich, h5py, ml-dtypes, packaging) are in the image; carrying a second
# ml-dtypes could break its JAX, so none is fetched.
#
#     benchmarks/fetch_card_wheels.sh            # into .card_wheels/ (ignored by git)
#     benchmarks/fetch_card_wheels.sh DIR
#
# The device tool carries the folder when the run names it (carry:
# [".card_wheels"]); gpu_models_bench.py installs its wheels into a temporary
# folder when keras does not import there (--wheels DIR for another folder).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:-$ROOT/.card_wheels}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$DEST"
rm -f "$DEST"/*.whl  # one version of each: two would stop the install there

PLATFORMS=()
for tag in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 \
           manylinux1_x86_64; do
    PLATFORMS+=(--platform "$tag")
done

"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" -d "$DEST" "keras==3.15.*" "namex" "optree"

# What the wheels ask for, so that a missing requirement shows here, not on the card.
for wheel in "$DEST"/*.whl; do
    echo "$(basename "$wheel")"
    "$PYTHON" - "$wheel" <<'EOF'
import sys, zipfile

with zipfile.ZipFile(sys.argv[1]) as archive:
    metadata = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
    for line in archive.read(metadata).decode().splitlines():
        if line.startswith("Requires-Dist:") and "extra ==" not in line:
            print("    needs", line.split(":", 1)[1].strip())
EOF
done
du -sh "$DEST"
