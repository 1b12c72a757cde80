#!/usr/bin/env bash
# Installs workpart's build and test dependencies (Debian/Ubuntu). Idempotent:
# apt-get runs only when a package is missing. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-mpi-dev libboost-graph-dev libboost-serialization-dev
  libopenmpi-dev openmpi-bin
  libeigen3-dev catch2 libopenblas-dev
  clang-format               # the layout check (scripts/format.sh --check)
  libscalapack-openmpi-dev   # bench_distributed_matmul's baseline (ScaLAPACK p?gemm)
  librsvg2-bin               # rsvg-convert: the tests render plan.to_svg()'s pictures
)

missing=()
for p in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup: missing packages (${missing[*]}) and not root; run as root" >&2
    exit 1
  fi
fi
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
