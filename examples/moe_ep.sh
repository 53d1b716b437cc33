#!/usr/bin/env bash
# Launches examples/moe_layer.py expert parallel: one process per GPU of
# this host (NPROC, default: every GPU torch sees), under torchrun; the
# arguments go to the example (--tokens are per rank).
#   bash examples/moe_ep.sh --check --tokens 1 512 4096
#   NPROC=2 bash examples/moe_ep.sh --bench --hidden 7168 \
#       --intermediate 2048 --experts 256 --tokens 512 4096 16384
# NVLink multicast stays off: the all-to-alls do not use it, and on a
# shared GPU host a program that does can take its GPUs out of service.
set -euo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
  NVSHMEM_DISABLE_NVLS=1
nproc=${NPROC:-$(python3 -c 'import torch; print(torch.cuda.device_count())')}
if [ "$nproc" -lt 1 ]; then
  echo "moe_ep.sh: no GPU" >&2
  exit 2
fi
exec python3 -m torch.distributed.run --standalone --nproc-per-node "$nproc" \
  examples/moe_layer.py --expert-parallel "$@"
