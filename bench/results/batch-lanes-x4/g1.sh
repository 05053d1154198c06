exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name --format=csv,noheader; nproc; free -g | head -2; df -h /tmp | tail -1
mkdir -p /tmp/w
t0=$(date +%s)
python3 .devbundle/bench/bench-batch-devices.py --cli $SV_CLI --sizes 512,1024 --files 4 --compactness 0.1,10 \
  --devices '0;0,1;0,1,2,3' --workdir /tmp/w --json $OUT/batch.json --plot $OUT/batch.png; echo "bench rc $? in $(( $(date +%s)-t0 )) s"
# a lanes run's timeline
I="/tmp/w/v1024-0.05-0.tif /tmp/w/v1024-0.05-1.tif /tmp/w/v1024-0.05-2.tif /tmp/w/v1024-0.05-3.tif"
rm -rf /tmp/w/tl; mkdir /tmp/w/tl; sync
G_MESSAGES_DEBUG=all $SV_CLI slic $I -o /tmp/w/tl/ --n-segments 1073741 --compactness 0.1 --backend cuda --devices 0,1,2,3 --json > $OUT/tl-lanes-1024.txt 2>&1; echo "tl rc $?"
xz -9 $OUT/tl-lanes-1024.txt
# errors: a list naming a GPU the machine lacks; fewer visible than asked
$SV_CLI slic /tmp/w/v512-0.05-0.tif /tmp/w/v512-0.05-1.tif -o /tmp/w/e/ --backend cuda --devices 0,1,7; echo "bad list rc $?"; ls /tmp/w/e 2>&1
CUDA_VISIBLE_DEVICES=2 $SV_CLI slic /tmp/w/v512-0.05-0.tif /tmp/w/v512-0.05-1.tif -o /tmp/w/e2/ --backend cuda --devices 0,1; echo "fewer visible rc $?"; ls /tmp/w/e2 2>&1
# memcheck with the leak check: three small files on two lanes, against one device
python3 -c "
import numpy as np, tifffile
for i in range(3):
    a = (np.random.default_rng(i).random((96, 80, 72)) * 255).astype(np.uint8); tifffile.imwrite(f'/tmp/w/s{i}.tif', a)"
mkdir -p /tmp/w/m1 /tmp/w/m2
$SV_CLI slic /tmp/w/s0.tif /tmp/w/s1.tif /tmp/w/s2.tif -o /tmp/w/m1/ --n-segments 300 --backend cuda --devices 0 > /dev/null; echo "one rc $?"
compute-sanitizer --tool memcheck --leak-check full $SV_CLI slic /tmp/w/s0.tif /tmp/w/s1.tif /tmp/w/s2.tif -o /tmp/w/m2/ --n-segments 300 --backend cuda --devices 0,1 > $OUT/memcheck.txt 2>&1; echo "memcheck rc $?"; tail -4 $OUT/memcheck.txt
for i in 0 1 2; do cmp /tmp/w/m1/s$i.tif /tmp/w/m2/s$i.tif && echo "s$i same"; done
