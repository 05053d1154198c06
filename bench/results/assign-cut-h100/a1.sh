exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib PATH=$PATH:/usr/local/cuda/bin
B=$PWD/.devbundle/bin
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
echo "== test-cuda /cuda/slic (warp lists)"; $B/test-cuda -p /cuda/slic 2>&1 | grep -E "^not ok|^# |^1\.\." | tail -5
echo "== test-cuda /cuda/slic (tile order)"; SV_ASSIGN_WARP_LISTS=0 $B/test-cuda -p /cuda/slic 2>&1 | grep -E "^not ok|^1\.\." | tail -5
echo "== test-cuda whole"; $B/test-cuda 2>&1 | grep -cE "^ok"; $B/test-cuda 2>&1 | grep -E "^not ok"
echo "== test-cuda-stream"; $B/test-cuda-stream 2>&1 | grep -E "^ok|^not ok" | sort | uniq -c | head
mkdir -p /tmp/j
for r in 1 2; do for wl in 0 1; do
  echo "== bench-cuda round $r warp lists $wl"
  SV_ASSIGN_WARP_LISTS=$wl timeout 200 $B/bench-cuda --sizes 256,500,1024 --compactness 0.01,0.1,1,10 --reps 3 --no-compute-floor --json /tmp/j/bench-r$r-wl$wl.json 2>/dev/null | grep -vE "^\s*$"
done; done
tar cJf $OUT/json.tar.xz -C /tmp/j .
