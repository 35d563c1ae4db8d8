#!/usr/bin/env bash
# The GPU device check, on any machine with an NVIDIA GPU, its driver,
# python3, numpy and a CUDA build of PyTorch (no dlc compiler, no LLVM):
#
#   tools/gpu/run_on_device.sh BUNDLE OUT [--budget-seconds S] [--sections ...]
#
# BUNDLE is the folder tools/gpu/prepare.py wrote here (gpu-check/); OUT gets
# results.json and results.md (the table, also printed). --dry-run checks the
# plumbing without a GPU (DLC_LIBCUDA pointing at a stand-in driver).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUNDLE OUT [--dry-run] [--budget-seconds S] [--sections ...]" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
bundle=$1
out=$2
shift 2
if [ ! -f "$bundle/manifest.json" ]; then
  echo "$0: $bundle has no manifest.json: run tools/gpu/prepare.py first" >&2
  exit 2
fi
exec "${PYTHON:-python3}" -u "$here/device_check.py" --bundle "$bundle" --out "$out" "$@"
