exec > $OUT/log.txt 2>&1
rm -rf .devbundle/bin; tar xJf .devbundle/bin.tar.xz -C .devbundle
export LD_LIBRARY_PATH=$PWD/.devbundle/lib PATH=$PATH:/usr/local/cuda/bin
B=$PWD/.devbundle/bin; CLI=$B/supervox-cli
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== test-cuda"; $B/test-cuda > /tmp/tc.txt 2>&1; echo rc $?; grep -c "^ok" /tmp/tc.txt; grep "^not ok" /tmp/tc.txt
echo "== test-cuda-stream"; $B/test-cuda-stream > /tmp/ts.txt 2>&1; echo rc $?; grep -E "^ok|^not ok|^1\.\." /tmp/ts.txt | cut -c1-100
cd /tmp
python3 $OLDPWD/.devbundle/bench/make-volume.py v96.tif 96 0.2 >/dev/null
python3 $OLDPWD/.devbundle/bench/make-volume.py v128.tif 128 0.3 >/dev/null
python3 -c "
import numpy as np, tifffile
z,y,x=np.mgrid[:128,:128,:128]
m=((z-64)**2+(y-60)**2+(x-70)**2<50**2).astype(np.uint8)
tifffile.imwrite('m128.tif', m)"
cmpr() { if cmp -s "$1" "$2"; then echo SAME; else echo DIFFERENT; fi; }
for args in "v96.tif --n-segments 32768 --compactness 0.05" "v96.tif --n-segments 32768 --compactness 5" "v128.tif --n-segments 3000 --compactness 0.05 --mask m128.tif" "v128.tif --n-segments 3000 --compactness 5 --slic-zero" "v128.tif --n-segments 80000 --compactness 0.1 --mask m128.tif"; do
  $CLI slic $args -o cpu.tif --backend cpu 2>/dev/null >/dev/null
  $CLI slic $args -o gpu.tif --backend cuda 2>/dev/null >/dev/null; echo "plain [$args] $(cmpr cpu.tif gpu.tif)"
  compute-sanitizer --tool memcheck --leak-check full $CLI slic $args -o mc.tif --backend cuda 2>&1 | grep -E "ERROR SUMMARY|LEAK SUMMARY" | head -2; echo "memcheck $(cmpr cpu.tif mc.tif)"
  compute-sanitizer --tool racecheck $CLI slic $args -o rc.tif --backend cuda 2>&1 | grep -E "RACECHECK SUMMARY|ERROR SUMMARY" | head -2; echo "racecheck $(cmpr cpu.tif rc.tif)"
done
for t in mask 3d-3-channels 3d-5-channels slic-zero low-compactness spacing dense-segments-2-channels-mask odd; do
  compute-sanitizer --tool racecheck $B/test-cuda -p /cuda/slic/bit-identical/$t 2>&1 | grep -E "^ok|^not ok|RACECHECK SUMMARY|ERROR SUMMARY" | head -3
done
mkdir -p /tmp/j
for r in 1 2; do for v in old new; do
  bin=$B/bench-cuda; [ $v = old ] && bin=$B/bench-cuda-old
  echo "== bench-cuda round $r $v"
  timeout 200 $bin --sizes 256,500,1024 --compactness 0.01,0.1,1,10 --reps 3 --no-compute-floor --json /tmp/j/bench-r$r-$v.json 2>/dev/null | grep -E "^ +[0-9]+ +[0-9.]+ " 
done; done
tar cJf $OUT/json.tar.xz -C /tmp/j .
