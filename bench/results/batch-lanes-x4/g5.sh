exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; ls /tmp/w 2>/dev/null | head -20
rm -f /tmp/w/v2048-*
t0=$(date +%s)
python3 .devbundle/bench/bench-batch-devices.py --cli $SV_CLI --sizes 1024 --files 8 --compactness 0.1,10 \
  --devices '0;0,1,2,3' --ranks 4 --workdir /tmp/w --json $OUT/batch-1024x8-ranks.json --plot $OUT/batch-1024x8-ranks.png; echo "bench rc $? in $(( $(date +%s)-t0 )) s"
