exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
mkdir -p /tmp/w; for i in 0 1 2 3; do python3 .devbundle/bench/make-volume.py /tmp/w/v512-$i.tif 512 0.0$((5+i)); done
I=$(ls /tmp/w/v512-[0-3].tif)
A="--n-segments 134217 --compactness 0.1"
run() { local name=$1; shift; rm -rf /tmp/w/$name; sync; t0=$(date +%s%N); G_MESSAGES_DEBUG=sv-cli "$@" -o /tmp/w/$name/ > /tmp/w/$name.txt 2>&1; echo "$name rc $? $(( ($(date +%s%N)-t0)/1000000 )) ms; $(grep -o 'batch: [^\"]*' /tmp/w/$name.txt | head -1)"; }
run one $SV_CLI slic $I $A --backend cuda --devices 0
run auto-all $SV_CLI slic $I $A --devices all
run auto-list $SV_CLI slic $I $A --devices 0,1,2,3
run auto-two $SV_CLI slic /tmp/w/v512-0.tif /tmp/w/v512-1.tif $A --devices 0,1,2,3
for d in auto-all auto-list; do for f in /tmp/w/one/*.tif; do cmp $f /tmp/w/$d/$(basename $f) || echo "DIFF $d $f"; done; done
for f in v512-0 v512-1; do cmp /tmp/w/one/$f.tif /tmp/w/auto-two/$f.tif || echo "DIFF two $f"; done
grep -h -o '"backend":"[a-z]*","mode":"[a-z-]*"' /tmp/w/auto-all/*.json | sort | uniq -c
grep -h -o '"devices":[0-9]*' /tmp/w/auto-two/*.json
echo checked
