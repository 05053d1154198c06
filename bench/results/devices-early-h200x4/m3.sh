exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc; mkdir -p /tmp/w
t0=$(date +%s%N); python3 .devbundle/bench/make-volume.py /tmp/w/v2048.tif 2048 0.05; python3 .devbundle/bench/make-volume.py /tmp/w/v1024.tif 1024 0.05; echo "volumes $(ms $t0) ms"
run() { local label=$1 ref=$2; shift 2; rm -f /tmp/w/d.tif; sync; t0=$(date +%s%N); env "$@" > /tmp/w/j.txt 2>&1; local rc=$?; echo "$label: $(ms $t0) ms rc $rc"
  [ -f $ref ] || cp /tmp/w/d.tif $ref; cmp $ref /tmp/w/d.tif || { echo DIFF; tail -3 /tmp/w/j.txt; }; }
A="--n-segments 8388608 --compactness 0.1 --backend cuda --json"
for r in 1 2; do
 for d in 0,1,2,3 0; do
  run "2048 early, devices $d" /tmp/w/r2048.tif $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices $d
  run "2048 before, devices $d" /tmp/w/r2048.tif SV_DEVICES_EARLY=0 $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices $d
 done
done
rm -f /tmp/w/d.tif; sync
G_MESSAGES_DEBUG=all $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0,1,2,3 > $OUT/tl-2048-4-early.txt 2>&1; cmp /tmp/w/r2048.tif /tmp/w/d.tif || echo DIFF
rm -f /tmp/w/v2048.tif /tmp/w/r2048.tif /tmp/w/d.tif
B="--n-segments 1048576 --compactness 0.1 --backend cuda --json"
for r in 1 2; do
 for d in 0,1,2,3 0 0,1; do
  run "1024 early, devices $d" /tmp/w/r1024.tif $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/d.tif $B --devices $d
  run "1024 before, devices $d" /tmp/w/r1024.tif SV_DEVICES_EARLY=0 $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/d.tif $B --devices $d
 done
done
G_MESSAGES_DEBUG=all $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/d.tif $B --devices 0,1,2,3 > $OUT/tl-1024-4-early.txt 2>&1; cmp /tmp/w/r1024.tif /tmp/w/d.tif || echo DIFF
mkdir -p /tmp/w/out /tmp/w/out2
# a batch of two files, and a photo held in memory beside a streamed file
python3 -c "
import numpy as np, tifffile
a = (np.random.default_rng(1).random((64, 96, 80)) * 255).astype(np.uint8); tifffile.imwrite('/tmp/w/s1.tif', a)
try:
    from PIL import Image; Image.fromarray((np.random.default_rng(2).random((120, 160, 3)) * 255).astype(np.uint8)).save('/tmp/w/p.png'); print('png made')
except Exception as e: print('no png', e)
"
$SV_CLI slic /tmp/w/s1.tif /tmp/w/v1024.tif -o /tmp/w/out/ --n-segments 2000 --backend cuda --devices 0,1 --json; echo "batch rc $?"; ls /tmp/w/out
[ -f /tmp/w/p.png ] && { $SV_CLI slic /tmp/w/s1.tif /tmp/w/p.png -o /tmp/w/out2/ --n-segments 200 --backend cuda --devices 0,1 --json; echo "photo batch rc $?"; ls /tmp/w/out2; }
$SV_CLI slic /tmp/w/s1.tif -o /tmp/w/e.tif --backend cuda --devices 0,1,7; echo "bad list rc $?"
CUDA_VISIBLE_DEVICES=2 $SV_CLI slic /tmp/w/s1.tif -o /tmp/w/e.tif --backend cuda --devices 0,1; echo "fewer visible rc $?"
