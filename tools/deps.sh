#!/usr/bin/env bash
# Installs the Debian packages Supervox needs to build, run and test.
# Usage: tools/deps.sh [--gui-runtime]
set -euo pipefail

packages=(
  build-essential meson ninja-build pkg-config
  libglib2.0-dev libtiff-dev libdeflate-dev libzstd-dev libjson-glib-dev libblosc-dev
  libgtk-4-dev libepoxy-dev libcglm-dev
  python3-skimage python3-tifffile python3-numpy python3-scipy python3-zstandard python3-zarr
  python3-pytest python3-mesonpy python3-pip
  libopenmpi-dev openmpi-bin
  xvfb xauth xdotool libgl1-mesa-dri mesa-utils
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "Installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q "${missing[@]}"
fi
