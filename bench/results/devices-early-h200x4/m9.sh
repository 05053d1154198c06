exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
mkdir -p /tmp/w; python3 .devbundle/bench/make-volume.py /tmp/w/v64.tif 64 0.05
for r in 1 2; do
t0=$(date +%s%N); mpirun --oversubscribe -np 2 /bin/true; echo "true np2: $(ms $t0) ms"
t0=$(date +%s%N); mpirun --oversubscribe -np 2 $SV_CLI info /tmp/w/v64.tif > /dev/null; echo "cli info np2 (MPI_Init): $(ms $t0) ms"
t0=$(date +%s%N); mpirun --oversubscribe --mca pml ob1 --mca btl self,vader --mca coll ^hcoll,ucc --mca osc ^ucx -np 2 $SV_CLI info /tmp/w/v64.tif > /dev/null; echo "cli info np2 no hcoll/ucc/osc-ucx: $(ms $t0) ms"
t0=$(date +%s%N); mpirun --oversubscribe --bind-to none -np 2 $SV_CLI info /tmp/w/v64.tif > /dev/null; echo "cli info np2 bind none: $(ms $t0) ms"
t0=$(date +%s%N); $SV_CLI info /tmp/w/v64.tif > /dev/null; echo "cli info alone: $(ms $t0) ms"
done
ompi_info 2>/dev/null | grep -E "MCA (pml|btl|coll|osc|mtl)" | head -30
