exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HWLOC_COMPONENTS=-opencl
I=$(ls /tmp/w/v1024-0.05-[0-7].tif)
rm -rf /tmp/w/r; mkdir -p /tmp/w/r; sync
t0=$(date +%s%N)
mpirun --oversubscribe -np 4 -x G_MESSAGES_DEBUG=all $SV_CLI slic $I -o /tmp/w/r/ --n-segments 1073741 --compactness 0.1 --backend cuda --json > $OUT/tl-ranks-1024x8.txt 2>&1
echo "ranks: $(( ($(date +%s%N)-t0)/1000000 )) ms"
grep -o '"mode":"[a-z-]*"' /tmp/w/r/*.json | sort | uniq -c
xz -9 $OUT/tl-ranks-1024x8.txt
rm -rf /tmp/w/r; mkdir -p /tmp/w/r; sync
t0=$(date +%s%N)
mpirun --oversubscribe -np 4 $SV_CLI slic $I -o /tmp/w/r/ --n-segments 1073741 --compactness 0.1 --backend cuda --json > /dev/null 2>&1
echo "ranks again: $(( ($(date +%s%N)-t0)/1000000 )) ms"
