exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib PATH=$PATH:/usr/local/cuda/bin
B=$PWD/.devbundle/bin
for wl in 0 1; do
  echo "== ncu warp lists $wl"
  SV_ASSIGN_WARP_LISTS=$wl timeout 250 ncu --kernel-name regex:assign_tiled --launch-skip 4 --launch-count 1 --set full \
     --metrics smsp__thread_inst_executed.sum,smsp__thread_inst_executed_pred_on.sum,smsp__inst_executed.sum \
     $B/bench-cuda --sizes 500 --compactness 0.1 --reps 1 --no-compute-floor > $OUT/ncu-500-c0.1-wl$wl.txt 2>&1
  echo rc $?
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|Avg. Active Threads|Avg. Not Predicated|Registers Per|smsp__" $OUT/ncu-500-c0.1-wl$wl.txt
done
echo "== floor"
SV_ASSIGN_WARP_LISTS=0 timeout 200 $B/bench-cuda --sizes 256,500 --compactness 0.1,10 --reps 3 --json $OUT/floor.json 2>&1 | grep -vE "^\s*$" | tail -12
