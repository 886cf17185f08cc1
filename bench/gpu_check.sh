#!/usr/bin/env bash
# bench/gpu_check.sh — the prepared check for a lent GPU machine (one H200 here); <= 5 minutes.
# Run from the repository root:   bash bench/gpu_check.sh [--quick]   (outputs go to $OUT if set)
# Needs only python3 with a CUDA torch on the machine: the worker is run directly, and the
# controller path through the library (no typer/fabric needed). Nothing is installed.
# What it shows: the nccl backend end to end at world size 1 (a single GPU cannot show multi-GPU
# bandwidth: busbw is 0 by definition at n=1, algbw is a device-local copy), that #wrong catches a
# perturbed contribution on the GPU, that a rank whose peer never joins times out (exit 3), and
# the --deep probe when envcheck/node/probe/ exists.
# --quick: the dry run CI does (tests/test_bench.py): gloo, 64 KiB, one rank in step 2, a 2 s
# rendezvous timeout.
set -u
cd "$(dirname "$0")/.."
QUICK=; [ "${1:-}" = --quick ] && QUICK=1
OUT=${OUT:-$(mktemp -d /tmp/envcheck-gpu-check.XXXXXX)}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
B=${BACKEND:-${QUICK:+gloo}}; B=${B:-nccl}   # BACKEND=gloo dry-runs the script on a machine without a GPU
MAXB=${MAX_BYTES:-${QUICK:+64K}}; MAXB=${MAXB:-256M}   # MAX_BYTES=64K for a quick dry run
RDV=${QUICK:+2}; RDV=${RDV:-10}   # seconds step 4 waits for a peer that never comes
exec > >(tee "$OUT/gpu_check.log") 2>&1
port() { "$PY" -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
step() { echo; echo "== $*"; }

step "machine"
date -u; uname -r
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
"$PY" --version
timeout 120 "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
  "available", torch.cuda.is_available(), "devices", torch.cuda.device_count(),
  "nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else None)' \
  || echo "torch with CUDA does not import under $PY: the worker steps below will fail"

step "1. worker alone, nccl, world size 1, 8 B .. 256 MiB"
MASTER_ADDR=127.0.0.1 MASTER_PORT=$(port) RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 NCCL_DEBUG=INFO \
  timeout 180 "$PY" envcheck/node/allreduce_worker.py --backend "$B" --max-bytes "$MAXB" \
  --warmup 5 --iters 20 --timeout 60 >"$OUT/worker_nccl.jsonl" 2>"$OUT/worker_nccl.log"
echo "exit $? (want 0)"; tail -n 4 "$OUT/worker_nccl.jsonl"; grep -m1 "NCCL version" "$OUT/worker_nccl.log"

step "2. controller path (library + launcher), nccl, 1 rank per GPU on this host"
NP=1   # --quick: one rank, without a torch import (seconds of CPU on CI) to count the GPUs
[ -n "$QUICK" ] || NP=$("$PY" -c 'import torch;print(max(1,torch.cuda.device_count()))' 2>/dev/null || echo 1)
timeout 240 env PYTHONPATH=. "$PY" - "$PY" "$NP" "$B" "$(PYTHONPATH=. "$PY" -c "from envcheck.allreduce.bandwidth import parse_size;print(parse_size(\"$MAXB\"))")" >"$OUT/controller_nccl.txt" 2>&1 <<'PYEOF'
import json, sys
from envcheck.allreduce.run import Options, run_allreduce
from envcheck.allreduce.render import render_text
from envcheck.remote import LocalRemote
opts = Options(backend=sys.argv[3], nproc_per_node=int(sys.argv[2]), max_bytes=int(sys.argv[4]),
               node_python=sys.argv[1], timeout=60)
rep = run_allreduce([LocalRemote()], opts, progress=lambda m: print("envcheck:", m))
print(render_text(rep))
print(json.dumps(rep.to_dict())[:4000])
sys.exit(3 if rep.failure else (1 if rep.wrong else 0))
PYEOF
echo "exit $? (want 0)"; cat "$OUT/controller_nccl.txt"

step "3. fault switch on the GPU: rank 0 perturbed -> #wrong > 0"
MASTER_ADDR=127.0.0.1 MASTER_PORT=$(port) RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 \
  ENVCHECK_TEST_PERTURB_RANK=0 timeout 120 "$PY" envcheck/node/allreduce_worker.py \
  --backend "$B" --max-bytes 1M --iters 2 2>/dev/null | tail -n 3

step "4. a peer that never joins: rank 0 of 2 alone -> timeout record, exit 3 in ~$RDV s"
start=$(date +%s)
MASTER_ADDR=127.0.0.1 MASTER_PORT=$(port) RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 \
  timeout 120 "$PY" envcheck/node/allreduce_worker.py --backend "$B" --rendezvous-timeout "$RDV" \
  --max-bytes 1K 2>/dev/null | tail -n 1
echo "exit ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s (want 3, ~$RDV s)"

step "5. probe --deep"
if [ -d envcheck/node/probe ]; then
  PYTHONPATH=. "$PY" -c 'from envcheck.audit.probe import probe_source; print(probe_source())' >"$OUT/probe.py"
  timeout 120 "$PY" "$OUT/probe.py" --deep >"$OUT/probe_deep.json" 2>"$OUT/probe_deep.err"
  echo "exit $?"; head -c 3000 "$OUT/probe_deep.json"; echo; tail -n 5 "$OUT/probe_deep.err"
else
  echo "envcheck/node/probe/ is not in this tree: skipped"
fi
echo; echo "outputs in $OUT"
