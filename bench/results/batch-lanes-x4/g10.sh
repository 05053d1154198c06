exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HWLOC_COMPONENTS=-opencl
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
mkdir -p /tmp/w; for i in 0 1 2 3; do python3 .devbundle/bench/make-volume.py /tmp/w/v512-$i.tif 512 0.0$((5+i)); done
I=$(ls /tmp/w/v512-[0-3].tif)
A="--n-segments 134217 --compactness 0.1"
rm -rf /tmp/w/one /tmp/w/np4; sync
t0=$(date +%s%N); $SV_CLI slic $I $A --backend cuda --devices 0 -o /tmp/w/one/ > /dev/null 2>&1; echo "one rc $? $(( ($(date +%s%N)-t0)/1000000 )) ms"
t0=$(date +%s%N); mpirun --oversubscribe -np 4 $SV_CLI slic $I $A -o /tmp/w/np4/ 2>&1 | tail -6; echo "np4 auto $(( ($(date +%s%N)-t0)/1000000 )) ms"
for f in /tmp/w/one/*.tif; do cmp $f /tmp/w/np4/$(basename $f) || echo "DIFF $f"; done
grep -h -o '"backend":"[a-z]*","mode":"[a-z-]*"' /tmp/w/np4/*.json | sort | uniq -c
echo checked
