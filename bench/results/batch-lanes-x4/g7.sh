exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t0=$(date +%s)
python3 .devbundle/bench/bench-batch-devices.py --cli $SV_CLI --sizes 1024 --files 8 --compactness 0.1,10 \
  --devices '0;0,1,2,3' --ranks 2,4 --workdir /tmp/w --json $OUT/batch-1024x8-ranks.json --plot $OUT/batch-1024x8-ranks.png; echo "bench rc $? in $(( $(date +%s)-t0 )) s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HWLOC_COMPONENTS=-opencl
mkdir -p /tmp/w/m4 /tmp/w/m5
python3 -c "
import numpy as np, tifffile
for i in range(3):
    a = (np.random.default_rng(i).random((96, 80, 72)) * 255).astype(np.uint8); tifffile.imwrite(f'/tmp/w/s{i}.tif', a)"
S="/tmp/w/s0.tif /tmp/w/s1.tif /tmp/w/s2.tif"
$SV_CLI slic $S -o /tmp/w/m4/ --n-segments 300 --backend cuda --devices 0 > /dev/null; echo "one rc $?"
mpirun --oversubscribe -np 2 compute-sanitizer --tool memcheck --leak-check full $SV_CLI slic $S -o /tmp/w/m5/ --n-segments 300 --backend cuda > $OUT/memcheck-ranks.txt 2>&1; echo "memcheck ranks rc $?"; grep -E 'ERROR SUMMARY|LEAK SUMMARY' $OUT/memcheck-ranks.txt
for i in 0 1 2; do cmp /tmp/w/m4/s$i.tif /tmp/w/m5/s$i.tif && echo "ranks s$i same"; done
