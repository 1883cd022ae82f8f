#!/usr/bin/env bash
# DeepGEMM's fp8 GEMM packed for the GPU host (which has no network): its
# Python package at commit 327ec92 (2025-04-09, the commit its README's H800
# figures come from) with the CUTLASS headers it was pinned to (eefa171) in
# its include/, as .gpu/lab/deepgemm.tar.gz. Run here, after scripts/gpu-bundle
# (which empties .gpu/):
#   gemm-lab/probes/deepgemm/pack.sh DEEPGEMM_GIT_DIR CUTLASS_GIT_DIR
# Then on the GPU host: scripts/gpu-run LOGDIR deepgemm (build.py, then
# `gemm-lab deepgemm` times its kernels beside ours and cuBLASLt's).
set -euo pipefail
dg=${1:?usage: pack.sh DEEPGEMM_GIT_DIR CUTLASS_GIT_DIR}
cl=${2:?usage: pack.sh DEEPGEMM_GIT_DIR CUTLASS_GIT_DIR}
dg_commit=327ec92
cutlass_commit=$(git --git-dir="$dg" ls-tree "$dg_commit" third-party/cutlass | awk '{print $3}')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$dg" archive "$dg_commit" deep_gemm | tar -x -C "$tmp"
git --git-dir="$cl" archive "$cutlass_commit" include/cute include/cutlass | tar -x -C "$tmp"
mv "$tmp/include/cute" "$tmp/include/cutlass" "$tmp/deep_gemm/include/"
# CUDA 13's cudaTypedefs.h names only the versioned type: the one change made to DeepGEMM
sed -i 's|#include <cudaTypedefs.h>|&\n#ifndef PFN_cuTensorMapEncodeTiled\n#define PFN_cuTensorMapEncodeTiled PFN_cuTensorMapEncodeTiled_v12000\n#endif|' \
  "$tmp/deep_gemm/include/deep_gemm/tma_utils.cuh"
mkdir -p .gpu/lab
tar -czf .gpu/lab/deepgemm.tar.gz -C "$tmp" deep_gemm
echo "packed DeepGEMM $dg_commit with CUTLASS $cutlass_commit: $(du -h .gpu/lab/deepgemm.tar.gz | cut -f1)"
