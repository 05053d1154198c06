exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1; nproc
t0=$(date +%s)
python3 .devbundle/bench/bench-scaling.py --cli $SV_CLI --backend cuda --sizes 1024,2048 --noise 0.05 --compactness 0.1,10 --devices '0;0,1;0,1,2,3' --ranks 1,2,4 --workdir /tmp/ws --json $OUT/scaling.json --plot $OUT/scaling.png > $OUT/scaling.txt 2>&1
echo "bench-scaling rc $? in $(( $(date +%s)-t0 )) s"
cat $OUT/scaling.txt | tail -50
