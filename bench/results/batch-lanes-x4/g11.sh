exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
mkdir -p /tmp/w
python3 .devbundle/bench/make-volume.py /tmp/w/v1024.tif 1024 0.05
python3 .devbundle/bench/make-volume.py /tmp/w/v1536.tif 1536 0.05
run() { local label=$1 ref=$2; shift 2; rm -f /tmp/w/d.tif; sync; t0=$(date +%s%N); "$@" -o /tmp/w/d.tif > /tmp/w/j.txt 2>&1; local rc=$?; echo "$label: $(( ($(date +%s%N)-t0)/1000000 )) ms rc $rc $(grep -o '"devices":[0-9]*' /tmp/w/d.json) $(grep -o 'devices all:.*' /tmp/w/j.txt | cut -c1-90)"; [ -f $ref ] || cp /tmp/w/d.tif $ref; cmp $ref /tmp/w/d.tif || echo DIFF; }
for r in 1 2; do
for d in 0 all 0,1 0,1,2,3; do run "1024 --devices $d" /tmp/w/r1024.tif $SV_CLI slic /tmp/w/v1024.tif --n-segments 1073741 --compactness 0.1 --backend cuda --devices $d; done
done
for r in 1 2; do
for d in 0 all 0,1 0,1,2,3; do run "1536 --devices $d" /tmp/w/r1536.tif $SV_CLI slic /tmp/w/v1536.tif --n-segments 3623878 --compactness 0.1 --backend cuda --devices $d; done
done
run "1024 auto --devices all" /tmp/w/r1024.tif $SV_CLI slic /tmp/w/v1024.tif --n-segments 1073741 --compactness 0.1 --devices all
