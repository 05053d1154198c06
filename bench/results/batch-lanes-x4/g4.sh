exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib SV_CLI=$PWD/.devbundle/bin/supervox-cli PATH=$PATH:/usr/local/cuda/bin
mkdir -p /tmp/w/m1 /tmp/w/m2 /tmp/w/m3
python3 -c "
import numpy as np, tifffile
for i in range(3):
    a = (np.random.default_rng(i).random((96, 80, 72)) * 255).astype(np.uint8); tifffile.imwrite(f'/tmp/w/s{i}.tif', a)"
S="/tmp/w/s0.tif /tmp/w/s1.tif /tmp/w/s2.tif"
$SV_CLI slic $S -o /tmp/w/m1/ --n-segments 300 --backend cuda --devices 0 > /dev/null; echo "one rc $?"
compute-sanitizer --tool memcheck --leak-check full $SV_CLI slic /tmp/w/s0.tif /tmp/w/s1.tif -o /tmp/w/m3/ --n-segments 300 --backend cuda --devices 0,1,2,3 > $OUT/memcheck-groups.txt 2>&1; echo "memcheck groups rc $?"; tail -3 $OUT/memcheck-groups.txt
compute-sanitizer --tool memcheck --leak-check full $SV_CLI slic $S -o /tmp/w/m2/ --n-segments 300 --backend cuda --devices 0,1 > $OUT/memcheck-lanes.txt 2>&1; echo "memcheck lanes rc $?"; tail -3 $OUT/memcheck-lanes.txt
for i in 0 1; do cmp /tmp/w/m1/s$i.tif /tmp/w/m3/s$i.tif && echo "groups s$i same"; done
for i in 0 1 2; do cmp /tmp/w/m1/s$i.tif /tmp/w/m2/s$i.tif && echo "lanes s$i same"; done
