exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin .devbundle/old; tar xJf .devbundle/bin.tar.xz -C .devbundle
mkdir -p .devbundle/old && tar xJf .devbundle/old.tar.xz -C .devbundle/old
export LD_LIBRARY_PATH=$PWD/.devbundle/lib PATH=$PATH:/usr/local/cuda/bin
NEW=$PWD/.devbundle/bin/supervox-cli OLD=$PWD/.devbundle/old/bin/supervox-cli
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
mkdir -p /tmp/w; for i in 0 1 2 3 4 5 6 7; do python3 .devbundle/bench/make-volume.py /tmp/w/v$i.tif 1024 0.0$((5+i)) & done; wait
I=$(ls /tmp/w/v[0-7].tif)
A="--n-segments 1073741 --compactness 0.1 --backend cuda --devices 0,1,2,3"
run() { local name=$1; shift; rm -rf /tmp/w/$name; sync; t0=$(date +%s%N); "$@" -o /tmp/w/$name/ > /tmp/w/$name.txt 2>&1; echo "$name rc $? $(( ($(date +%s%N)-t0)/1000000 )) ms"; }
for r in 1 2; do run old$r $OLD slic $I $A; run new$r $NEW slic $I $A; done
for f in /tmp/w/old1/*.tif; do cmp $f /tmp/w/new1/$(basename $f) || echo "DIFF $f"; cmp $f /tmp/w/new2/$(basename $f) || echo "DIFF2 $f"; done
ls /tmp/w/new2 | wc -l
rm -rf /tmp/w/tl; sync; G_MESSAGES_DEBUG=all $NEW slic $I $A -o /tmp/w/tl/ > $OUT/tl-finisher.txt 2>&1; xz -9 $OUT/tl-finisher.txt
echo done
