#!/usr/bin/env bash
# Installs what is missing, builds, and opens Supervox (the bundled sample
# when no file is given). Without a display (a server, a container) it runs
# the same job headless with supervox-cli on the generated sample instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/build.sh

# `import supervox` for the user's python3, from this checkout: a .pth file
# in the user site-packages names python/ (the package finds
# build/lib/libsupervox.so.0 itself). Delete the file to undo it.
if site=$(python3 -m site --user-site 2>/dev/null) && mkdir -p "$site" 2>/dev/null; then
  echo "$PWD/python" > "$site/supervox-checkout.pth"
  echo "Python: import supervox works from $PWD/python ($site/supervox-checkout.pth)." >&2
fi

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x build/app/gui/supervox ]; then
  exec build/app/gui/supervox "$@"
fi

echo "No display: segmenting the sample with supervox-cli instead of opening the window." >&2
cli=build/app/cli/supervox-cli
out=build/sample
mkdir -p "$out"
if [ $# -gt 0 ]; then
  input=$1
else
  input=$out/sample.tif
  "$cli" synth -o "$input" --truth "$out/sample-truth.tif"
fi
"$cli" info "$input"
"$cli" slic "$input" -o "$out/labels.tif" --n-segments 2000 --compactness 0.1
echo "Labels: $out/labels.tif (parameters, backend and timings in $out/labels.json)"
if [ $# -eq 0 ]; then
  "$cli" eval "$out/labels.tif" --truth "$out/sample-truth.tif" --image "$input"
fi
