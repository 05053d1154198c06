exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
mkdir -p /tmp/w; for i in 0 1 2 3; do python3 .devbundle/bench/make-volume.py /tmp/w/v512-$i.tif 512 0.0$((5+i)); done
I=$(ls /tmp/w/v512-[0-3].tif)
rm -rf /tmp/w/a /tmp/w/b; sync
t0=$(date +%s%N); G_MESSAGES_DEBUG=sv-cli $SV_CLI slic $I -o /tmp/w/a/ --n-segments 134217 --compactness 0.1 --backend cuda --devices all > /tmp/w/all.txt 2>&1; echo "all rc $? $(( ($(date +%s%N)-t0)/1000000 )) ms"; grep -E 'batch:|on devices|files:' /tmp/w/all.txt | cut -c1-160
t0=$(date +%s%N); $SV_CLI slic $I -o /tmp/w/b/ --n-segments 134217 --compactness 0.1 --backend cuda --devices 0 > /dev/null 2>&1; echo "one rc $? $(( ($(date +%s%N)-t0)/1000000 )) ms"
for f in /tmp/w/b/*.tif; do cmp $f /tmp/w/a/$(basename $f) && echo "same $(basename $f)"; done
grep -o '"devices":[0-9]*' /tmp/w/a/*.json
