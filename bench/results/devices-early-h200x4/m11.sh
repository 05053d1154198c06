exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
t0=$(date +%s%N); HWLOC_COMPONENTS=-opencl mpirun --oversubscribe -np 2 /bin/true; echo "true np2 -opencl: $(ms $t0) ms"
mkdir -p /tmp/w; [ -f /tmp/w/v1024.tif ] || python3 .devbundle/bench/make-volume.py /tmp/w/v1024.tif 1024 0.05
B="--n-segments 1048576 --compactness 0.1 --backend cuda --json"
for r in 1 2; do for np in 2 4; do
t0=$(date +%s%N); mpirun --oversubscribe -np $np $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/m.tif $B > /dev/null; echo "np$np: $(ms $t0) ms"
t0=$(date +%s%N); HWLOC_COMPONENTS=-opencl mpirun --oversubscribe -np $np $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/h.tif $B > /dev/null; echo "np$np HWLOC_COMPONENTS=-opencl: $(ms $t0) ms"; cmp /tmp/w/m.tif /tmp/w/h.tif || echo DIFF
done; done
t0=$(date +%s%N); $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/o.tif $B --devices 0 > /dev/null; echo "one device: $(ms $t0) ms"; cmp /tmp/w/m.tif /tmp/w/o.tif || echo DIFF
