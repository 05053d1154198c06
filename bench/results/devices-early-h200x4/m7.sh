exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
mkdir -p /tmp/w; python3 .devbundle/bench/make-volume.py /tmp/w/v1024.tif 1024 0.05; python3 .devbundle/bench/make-volume.py /tmp/w/v160.tif 160 0.05
B="--n-segments 1048576 --compactness 10 --backend cuda --json"
for r in 1 2; do for d in 0,1,2,3 0; do
 t0=$(date +%s%N); $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/a.tif $B --devices $d > /dev/null; echo "devices $d default: $(ms $t0) ms rc $?"
 t0=$(date +%s%N); SV_FULL_EXIT=1 $SV_CLI slic /tmp/w/v1024.tif -o /tmp/w/b.tif $B --devices $d > /dev/null; echo "devices $d full exit: $(ms $t0) ms"; cmp /tmp/w/a.tif /tmp/w/b.tif || echo DIFF
done; done
$SV_CLI slic /tmp/w/v160.tif -o /tmp/w/c160.tif --n-segments 4096 --compactness 0.1 --backend cpu > /dev/null
for e in "" SV_FULL_EXIT=1; do
 env $e compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $SV_CLI slic /tmp/w/v160.tif -o /tmp/w/g160.tif --n-segments 4096 --compactness 0.1 --backend cuda --devices 0,1 > /tmp/w/mc.txt 2>&1; echo "memcheck [$e] rc $?"; tail -3 /tmp/w/mc.txt; cmp /tmp/w/c160.tif /tmp/w/g160.tif && echo "160 same as cpu"
done
nvidia-smi --query-compute-apps=pid,used_memory --format=csv
