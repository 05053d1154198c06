#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite, then the engine tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/deps.sh
bash tools/build.sh

status=0
meson test -C build --print-errorlogs --num-processes 2 || status=1

if [ -z "${SV_SKIP_SANITIZE:-}" ]; then
  if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
      -Dcuda=disabled -Dgui=disabled -Dbuildtype=debug
  fi
  meson compile -C build-asan
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    meson test -C build-asan --suite engine --suite cli --print-errorlogs --num-processes 2 --timeout-multiplier 4 \
    || status=1
fi

# The gui suite saves screenshots of the window beside the test logs.
for shot in build/meson-logs/gui-*.png; do
  [ -f "$shot" ] && echo "screenshot: $PWD/$shot"
done

logs=(build/meson-logs/testlog.json)
[ -n "${SV_SKIP_SANITIZE:-}" ] || logs+=(build-asan/meson-logs/testlog.json)
/usr/bin/python3 tools/test-summary.py "${logs[@]}"
exit $status
