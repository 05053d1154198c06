exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
export PATH=$PATH:/usr/local/cuda/bin
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc; mkdir -p /tmp/w
t0=$(date +%s%N); python3 .devbundle/bench/make-volume.py /tmp/w/v2048.tif 2048 0.05; python3 .devbundle/bench/make-volume.py /tmp/w/v1024.tif 1024 0.05; python3 .devbundle/bench/make-volume.py /tmp/w/v160.tif 160 0.05; echo "volumes $(ms $t0) ms"
run() { local label=$1 ref=$2; shift 2; rm -f /tmp/w/d.tif; sync; t0=$(date +%s%N); env "$@" > /tmp/w/j.txt 2>&1; local rc=$?; echo "$label: $(ms $t0) ms rc $rc"
  [ -f $ref ] || cp /tmp/w/d.tif $ref; cmp $ref /tmp/w/d.tif || { echo DIFF; tail -3 /tmp/w/j.txt; }; }
A="--n-segments 8388608 --compactness 0.1 --backend cuda --json"
for r in 1 2; do
 for d in 0,1,2,3 0 0,1; do
  run "2048 early, devices $d" /tmp/w/r2048.tif $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices $d
  run "2048 before, devices $d" /tmp/w/r2048.tif SV_DEVICES_EARLY=0 $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices $d
 done
done
B="--n-segments 1048576 --compactness 0.1 --backend cuda --json"
for r in 1 2; do
 for d in 0,1,2,3 0 0,1; do
  run "1024 early, devices $d" /tmp/w/r1024.tif $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/d.tif $B --devices $d
  run "1024 before, devices $d" /tmp/w/r1024.tif SV_DEVICES_EARLY=0 $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/d.tif $B --devices $d
 done
done
rm -f /tmp/w/d.tif; sync
G_MESSAGES_DEBUG=all $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0,1,2,3 > $OUT/tl-2048-4-early.txt 2>&1; cmp /tmp/w/r2048.tif /tmp/w/d.tif || echo DIFF
rm -f /tmp/w/d.tif; sync
G_MESSAGES_DEBUG=all $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0 > $OUT/tl-2048-1-early.txt 2>&1; cmp /tmp/w/r2048.tif /tmp/w/d.tif || echo DIFF
rm -f /tmp/w/v2048.tif /tmp/w/r2048.tif /tmp/w/d.tif
# the CPU's labels for 160³ against two devices under memcheck, early opening
$SV_CLI slic /tmp/w/v160.tif -o /tmp/w/c160.tif --n-segments 4096 --compactness 0.1 --backend cpu > /dev/null
t0=$(date +%s%N); G_MESSAGES_DEBUG=all compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $SV_CLI slic /tmp/w/v160.tif -o /tmp/w/g160.tif --n-segments 4096 --compactness 0.1 --backend cuda --devices 0,1 > $OUT/memcheck-160.txt 2>&1; echo "memcheck rc $? in $(ms $t0) ms"; cmp /tmp/w/c160.tif /tmp/w/g160.tif && echo "160 same as cpu"
tail -4 $OUT/memcheck-160.txt; grep -c "opened beside" $OUT/memcheck-160.txt
t0=$(date +%s%N); .devbundle/bin/test-cuda-stream > $OUT/test-cuda-stream.txt 2>&1; echo "test-cuda-stream rc $? in $(ms $t0) ms"; grep -E "^ok|^not ok" $OUT/test-cuda-stream.txt
