#!/usr/bin/env bash
# Installs what is missing, builds, and opens Supervox (the bundled sample
# when no file is given).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh && bash tools/build.sh && exec build/app/gui/supervox "$@"
