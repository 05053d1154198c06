exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
nvidia-smi --query-gpu=name --format=csv,noheader; nproc; mkdir -p /tmp/w; df -T /tmp/w | tail -1; uname -r
SV_BUILD_DIR=/tmp/w .devbundle/bin/test-io-file-put
t0=$(date +%s%N); python3 .devbundle/bench/make-volume.py /tmp/w/v2048.tif 2048 0.05; echo "volume $(ms $t0) ms"
A="--n-segments 8388608 --compactness 0.1 --backend cuda --json"
run() { # label env... -- args
  local label=$1; shift; rm -f /tmp/w/d.tif; sync; t0=$(date +%s%N); env "$@" > /tmp/w/j.txt 2>&1; local rc=$?; echo "$label: $(ms $t0) ms rc $rc"; 
  [ -f /tmp/w/ref.tif ] || cp /tmp/w/d.tif /tmp/w/ref.tif; cmp /tmp/w/ref.tif /tmp/w/d.tif || echo DIFF; }
for r in 1 2; do
  run "4 dev mapped" $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0,1,2,3
  run "4 dev pwrite" SV_FILE_MAP=0 $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0,1,2,3
  run "1 dev mapped" $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0
  run "1 dev pwrite" SV_FILE_MAP=0 $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0
  run "2 dev mapped" $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0,1
  run "np4 mapped" mpirun --oversubscribe -np 4 $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A
  run "np4 pwrite" mpirun --oversubscribe -x SV_FILE_MAP=0 -np 4 $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A
done
rm -f /tmp/w/d.tif; sync
G_MESSAGES_DEBUG=all $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0,1,2,3 > $OUT/tl-4-mapped.txt 2>&1; cmp /tmp/w/ref.tif /tmp/w/d.tif || echo DIFF
rm -f /tmp/w/d.tif; sync
SV_FILE_MAP=0 G_MESSAGES_DEBUG=all $SV_CLI slic /tmp/w/v2048.tif -o /tmp/w/d.tif $A --devices 0,1,2,3 > $OUT/tl-4-pwrite.txt 2>&1; cmp /tmp/w/ref.tif /tmp/w/d.tif || echo DIFF
ls -la /tmp/w
