#!/usr/bin/env bash
# CUTLASS's sm_80 bf16 GEMMs beside cuBLAS: an anchor for what mma.sync
# kernels reach on the GPU at hand (issue 58). On the GPU host (nvcc, cuBLAS):
#   gemm-lab/probes/cutlass_sm80/run.sh CUTLASS_INCLUDE OUTDIR [SIZES...]
# CUTLASS_INCLUDE: a CUTLASS checkout's include/ (header-only; the 2.x device
# API). Compiles one binary a tiling, in parallel, for sm_90 from compute_80
# code (so only sm_80 instructions), then runs each at every size.
set -uo pipefail
inc=${1:?usage: run.sh CUTLASS_INCLUDE OUTDIR [SIZES...]}
out=${2:?usage: run.sh CUTLASS_INCLUDE OUTDIR [SIZES...]}
shift 2
sizes=${*:-4096 8192}
here=$(dirname "$0")
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
mkdir -p "$out"
# TBM TBN TBK WM WN STAGES SWZ: the tilings CUTLASS's profiler lists for sm_80 bf16, 8 and 4 warps
tilings=(
  "128 256 64 64 64 3 8" "256 128 64 64 64 3 8" "128 256 32 64 64 4 8" "256 128 32 64 64 4 8"
  "128 128 64 64 64 4 8" "128 128 32 64 64 5 8" "128 256 64 64 64 4 8" "128 256 64 64 64 3 1"
)
pids=()
for t in "${tilings[@]}"; do
  read -r tbm tbn tbk wm wn st swz <<< "$t"
  for bcol in 0 1; do
    name="g_${tbm}x${tbn}x${tbk}_${wm}x${wn}_s${st}_z${swz}_b${bcol}"
    nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode "arch=compute_80,code=sm_$arch" -I"$inc" \
      -DTBM=$tbm -DTBN=$tbn -DTBK=$tbk -DWM=$wm -DWN=$wn -DSTAGES=$st -DSWZ=$swz -DBCOL=$bcol \
      "$here/gemm.cu" -o "$out/$name" -lcublas > "$out/$name.build.log" 2>&1 &
    pids+=($!)
  done
done
for p in "${pids[@]}"; do wait "$p"; done
for b in "$out"/g_*; do
  case $b in *.log) continue ;; esac
  timeout 120 "$b" $sizes || echo "$(basename "$b"): failed ($?)"
done
for l in "$out"/*.build.log; do
  [ -s "$l" ] && { echo "== $l"; grep -m5 -i error "$l"; }
done
true
