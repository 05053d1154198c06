exec > $OUT/log.txt 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ms() { echo $(( ($(date +%s%N)-$1)/1000000 )); }
for r in 1 2; do
t0=$(date +%s%N); mpirun --oversubscribe -np 2 /bin/true; echo "true np2: $(ms $t0) ms"
t0=$(date +%s%N); HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-rsmi,-levelzero mpirun --oversubscribe -np 2 /bin/true; echo "true np2 hwloc no gpu plugins: $(ms $t0) ms"
t0=$(date +%s%N); HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-rsmi,-levelzero,-pci mpirun --oversubscribe -np 2 /bin/true; echo "true np2 hwloc no gpu, no pci: $(ms $t0) ms"
t0=$(date +%s%N); mpirun --oversubscribe --mca ras ^gridengine,slurm,tm,lsf -np 2 /bin/true; echo "true np2 ras local: $(ms $t0) ms"
done
ls /usr/lib/x86_64-linux-gnu/hwloc/ 2>/dev/null; hwloc-info --version 2>/dev/null
t0=$(date +%s%N); lstopo-no-graphics > /dev/null 2>&1; echo "lstopo $(ms $t0) ms"
