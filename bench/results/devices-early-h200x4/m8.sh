exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
mkdir -p /tmp/w; python3 .devbundle/bench/make-volume.py /tmp/w/v1024.tif 1024 0.05
B="--n-segments 1048576 --compactness 0.1 --backend cuda --json"
for r in 1 2; do
t0=$(date +%s%N); mpirun --oversubscribe -np 2 $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/m.tif $B > /dev/null; echo "np2: $(ms $t0) ms"
t0=$(date +%s%N); mpirun --oversubscribe -np 1 $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/m1.tif $B > /dev/null; echo "np1: $(ms $t0) ms"; cmp /tmp/w/m.tif /tmp/w/m1.tif || echo DIFF
done
date +%H:%M:%S.%N; mpirun --oversubscribe -np 2 -x G_MESSAGES_DEBUG=all $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/m.tif $B > $OUT/tl-np2.txt 2>&1; date +%H:%M:%S.%N
mpirun --version | head -1; which mpirun
