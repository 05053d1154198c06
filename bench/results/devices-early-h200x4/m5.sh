exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t0=$(date +%s)
python3 .devbundle/bench/bench-scaling.py --cli $SV_CLI --backend cuda --sizes 1024 --noise 0.05 --compactness 0.1,10 --devices '0;0,1;0,1,2,3;0;0,1,2,3' --ranks 1 --workdir /tmp/ws --json $OUT/release.json > $OUT/release.txt 2>&1
echo "bench-scaling rc $? in $(( $(date +%s)-t0 )) s"
cat $OUT/release.txt | tail -30
for d in 0,1,2,3 0; do
G_MESSAGES_DEBUG=all $SV_CLI slic /tmp/ws/*1024*0.05*.tif -o /tmp/ws/d.tif --n-segments 1048576 --compactness 0.1 --backend cuda --devices $d 2>&1 | grep -E "released|closed in|slic: ends" | cut -c1-160; date +%H:%M:%S.%N
done
ls /tmp/ws
