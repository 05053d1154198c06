exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
mkdir -p /tmp/w; python3 .devbundle/bench/make-volume.py /tmp/w/v1024.tif 1024 0.05
B="--n-segments 1048576 --compactness 10 --backend cuda --json"
for r in 1 2 3; do for d in 0,1,2,3 0; do
 t0=$(date +%s%N); $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/a.tif $B --devices $d > /dev/null; echo "devices $d teardown: $(ms $t0) ms"
 t0=$(date +%s%N); SV_QUICK_EXIT=1 $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/b.tif $B --devices $d > /dev/null; echo "devices $d quick exit: $(ms $t0) ms"; cmp /tmp/w/a.tif /tmp/w/b.tif || echo DIFF
done; done
nvidia-smi --query-compute-apps=pid,used_memory --format=csv
