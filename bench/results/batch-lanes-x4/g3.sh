exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; ls /tmp/w | head -20
t0=$(date +%s)
python3 .devbundle/bench/bench-batch-devices.py --cli $SV_CLI --sizes 2048 --files 2 --compactness 0.1 \
  --devices '0;0,1,2,3' --workdir /tmp/w --json $OUT/batch-2048x2-groups.json; echo "bench rc $? in $(( $(date +%s)-t0 )) s"
I="/tmp/w/v2048-0.05-0.tif /tmp/w/v2048-0.05-1.tif"
rm -rf /tmp/w/tl; mkdir /tmp/w/tl; sync
G_MESSAGES_DEBUG=all $SV_CLI slic $I -o /tmp/w/tl/ --n-segments 8589934 --compactness 0.1 --backend cuda --devices 0,1,2,3 --json > $OUT/tl-lanes-2048x2.txt 2>&1; echo "tl rc $?"
xz -9 $OUT/tl-lanes-2048x2.txt
mkdir -p /tmp/w/m3
compute-sanitizer --tool memcheck --leak-check full $SV_CLI slic /tmp/w/s0.tif /tmp/w/s1.tif -o /tmp/w/m3/ --n-segments 300 --backend cuda --devices 0,1,2,3 > $OUT/memcheck-groups.txt 2>&1; echo "memcheck rc $?"; tail -4 $OUT/memcheck-groups.txt
for i in 0 1; do cmp /tmp/w/m1/s$i.tif /tmp/w/m3/s$i.tif && echo "s$i same"; done
