exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib PATH=$PATH:/usr/local/cuda/bin SV_CLI=$PWD/.devbundle/bin/supervox-cli
B=$PWD/.devbundle/bin; CLI=$B/supervox-cli
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== test-cuda"; $B/test-cuda > /tmp/tc.txt 2>&1; echo rc $?; grep -c "^ok" /tmp/tc.txt; grep "^not ok" /tmp/tc.txt
echo "== test-cuda-stream"; $B/test-cuda-stream > /tmp/ts.txt 2>&1; echo rc $?; grep -E "^ok|^not ok|^1\.\." /tmp/ts.txt | cut -c1-100; tail -3 /tmp/ts.txt
cd /tmp
python3 $OLDPWD/.devbundle/bench/make-volume.py v96.tif 96 0.2 >/dev/null
cmpr() { if cmp -s "$1" "$2"; then echo SAME; else echo DIFFERENT; fi; }
for args in "v96.tif --n-segments 32768 --compactness 0.05" "v96.tif --n-segments 900 --compactness 5"; do
  $CLI slic $args -o cpu.tif --backend cpu 2>/dev/null >/dev/null
  compute-sanitizer --tool memcheck --leak-check full $CLI slic $args -o mc.tif --backend cuda 2>&1 | grep -E "ERROR SUMMARY|LEAK SUMMARY" | head -2; echo "memcheck [$args] $(cmpr cpu.tif mc.tif)"
  compute-sanitizer --tool racecheck $CLI slic $args -o rc.tif --backend cuda 2>&1 | grep -E "RACECHECK SUMMARY" | head -2; echo "racecheck $(cmpr cpu.tif rc.tif)"
done
cd $OLDPWD
for c in 0.1 10; do for v in old new; do
  bin=$B/bench-cuda; [ $v = old ] && bin=$B/bench-cuda-old
  echo "== ncu $v C $c"
  timeout 200 ncu --kernel-name regex:assign_tiled --launch-skip 4 --launch-count 1 --section SpeedOfLight --section InstructionStats --section WarpStateStats --section LaunchStats --section Occupancy \
     --metrics smsp__thread_inst_executed.sum,smsp__thread_inst_executed_pred_on.sum,smsp__inst_executed.sum \
     $bin --sizes 500 --compactness $c --reps 1 --no-compute-floor > /tmp/ncu-$v-$c.txt 2>&1
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|Avg. Active Threads|Avg. Not Predicated|Registers Per|Achieved Occupancy|smsp__" /tmp/ncu-$v-$c.txt
done; done
tar cJf $OUT/ncu.tar.xz -C /tmp ncu-old-0.1.txt ncu-new-0.1.txt ncu-old-10.txt ncu-new-10.txt
echo "== floor"
timeout 100 $B/bench-cuda --sizes 256 --compactness 0.01,0.1,1,10 --reps 3 --json $OUT/floor-256.json 2>&1 | grep -E "^ +[0-9]+ +[0-9.]+ |compute floor:" | cut -c1-240
timeout 200 $B/bench-cuda --sizes 500 --compactness 0.1,1,10 --reps 3 --json $OUT/floor-500.json 2>&1 | grep -E "^ +[0-9]+ +[0-9.]+ |compute floor:" | cut -c1-240
