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
# Last, it installs them as the card will (no index, no dependencies) but for
# CPython 3.12 on manylinux x86-64 into a scratch folder, and checks that what
# the tool sends (the tracked files, the wheels, .data/ when present) stays
# under its 64 MiB. Checked 2026-12-02: keras 3.15.1, namex 0.1.0, optree
# 0.20.0 (cp312 manylinux_2_27/2_28), 2.8 MB; with the tree ~21 MiB in all.
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

# Installable as the card installs them, for its Python 3.12 (pip refuses a wheel of another tag).
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
"$PYTHON" -m pip install --quiet --no-index --no-deps --no-compile --no-cache-dir --only-binary=:all: \
    --python-version 3.12 --implementation cp "${PLATFORMS[@]}" --target "$SCRATCH/site" "$DEST"/*.whl
echo "installs for CPython 3.12 manylinux x86-64: $(ls "$SCRATCH/site" | grep -v dist-info | tr '\n' ' ')"

# What the device tool sends: the tracked files, the wheels, and .data/ when it is there (64 MiB at most).
cd "$ROOT"
TREE=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
WHEELS=$(du -sb "$DEST" | cut -f1)
DATA=$( [ -d .data ] && du -sb .data | cut -f1 || echo 0)
TOTAL=$((TREE + WHEELS + DATA))
echo "carry: tree $((TREE >> 20)) MiB + wheels $((WHEELS >> 20)) MiB + .data $((DATA >> 20)) MiB = $((TOTAL >> 20)) MiB of 64"
if [ "$TOTAL" -gt $((64 << 20)) ]; then
    echo "over the device tool's 64 MiB: carry less" >&2
    exit 1
fi
