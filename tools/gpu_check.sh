#!/usr/bin/env bash
# gpu_check.sh: everything that needs a GPU, in one run, into one report (gpu_report.md).
#
#   bash tools/gpu_check.sh [report path]        (default: ./gpu_report.md)
#
# On a machine with an NVIDIA GPU, nvcc and compute-sanitizer:
#   1. builds fkeras from scratch into a fresh virtual environment (build/gpu_check/venv,
#      --system-site-packages so numpy/pytest/torch come from the host Python):
#      pip install with FKERAS_CUDA=ON and the architecture of the local GPU(s)
#      (nvidia-smi's compute_cap, e.g. "90-real"; FKERAS_CUDA_ARCHS overrides);
#   2. runs `pytest -m cuda` (every GPU test) and the CPU-side tests/cuda;
#   3. runs the GPU tests under compute-sanitizer memcheck, racecheck and initcheck;
#   4. runs bench/bench_cuda.py (kernels vs cudaMemcpy bandwidth and cuBLAS via torch) and
#      bench/bench_fit.py --gpu (the fit workloads on fkeras's cuda device vs torch CUDA);
#   5. dumps register / shared / local (spill) use per kernel: cuobjdump --dump-resource-usage;
# and writes each step's command, exit status, duration and output tail to the report.
# Exits non-zero when any step failed. Not part of CI (CI has no GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
REPORT=$(realpath -m "${1:-gpu_report.md}")
WORK=$ROOT/build/gpu_check
PY=${PYTHON:-python3}
mkdir -p "$WORK"
FAILED=0

section() {  # section "title" command...: runs, records status/time/output in the report
  local title=$1; shift
  local log=$WORK/$(echo "$title" | tr -c 'A-Za-z0-9' '_').log
  local t0=$(date +%s)
  echo "== $title" >&2
  "$@" >"$log" 2>&1
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  [ $rc -eq 0 ] || FAILED=1
  {
    echo "## $title"
    echo
    echo "\`$*\` -> exit $rc in ${dt}s$([ $rc -eq 0 ] || echo ' **FAILED**')"
    echo
    echo '```'
    tail -n "${TAIL:-60}" "$log"
    echo '```'
    echo
  } >>"$REPORT"
  return $rc
}

{
  echo "# fkeras GPU check"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "- host: $(uname -n), $(nproc) cores"
} >"$REPORT"

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "- **no GPU**: nvidia-smi missing or it sees no device; nothing to check" >>"$REPORT"
  echo "gpu_check: no GPU (report: $REPORT)" >&2
  exit 1
fi
if ! command -v nvcc >/dev/null; then
  echo "- **no nvcc** on the PATH: cannot build fkeras._C_cuda" >>"$REPORT"
  exit 1
fi
CAPS=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | tr -d '.' | sort -u)
ARCHS=${FKERAS_CUDA_ARCHS:-$(echo "$CAPS" | sed 's/$/-real/' | paste -sd';')}
{
  echo "- GPUs: $(nvidia-smi --query-gpu=name,memory.total,compute_cap,driver_version --format=csv,noheader | paste -sd';')"
  echo "- nvcc: $(nvcc --version | tail -n 2 | head -n 1)"
  echo "- archs built: $ARCHS"
  echo
} >>"$REPORT"

# 1. fresh build (a new build dir and venv each run)
rm -rf "$WORK/venv" "$ROOT"/build/cp*
"$PY" -m venv --system-site-packages "$WORK/venv"
VPY=$WORK/venv/bin/python
section "build (pip install, FKERAS_CUDA=ON, archs $ARCHS)" \
  "$VPY" -m pip install --no-deps --no-build-isolation -v . \
  --config-settings=cmake.define.FKERAS_CUDA=ON \
  "--config-settings=cmake.define.FKERAS_CUDA_ARCHS=$ARCHS" \
  || { echo "gpu_check: build failed (report: $REPORT)" >&2; exit 1; }
SO=$("$VPY" -c "import fkeras._C_cuda as m; print(m.__file__)" 2>/dev/null)
RUN=(env -C "$WORK" "$VPY")   # run from outside the source tree: tests import the installed fkeras
section "python -m fkeras" "${RUN[@]}" -m fkeras

# 2. tests
section "pytest -m cuda (GPU tests)" "${RUN[@]}" -m pytest -q -p no:cacheprovider -m cuda "$ROOT/tests"
section "pytest tests/cuda (all, incl. host tests)" "${RUN[@]}" -m pytest -q -p no:cacheprovider "$ROOT/tests/cuda"

# 3. compute-sanitizer over the GPU tests
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck initcheck; do
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    TAIL=30 section "compute-sanitizer --tool $tool" compute-sanitizer --tool "$tool" \
      "${extra[@]}" --error-exitcode 99 --target-processes all \
      "${RUN[@]}" -m pytest -q -p no:cacheprovider -x -m cuda "$ROOT/tests/cuda"
  done
else
  echo "## compute-sanitizer: not found on the PATH (skipped)" >>"$REPORT"; FAILED=1
fi

# 4. benches
section "bench/bench_cuda.py" "${RUN[@]}" "$ROOT/bench/bench_cuda.py"
section "bench/bench_fit.py --gpu (fit on the cuda device vs torch CUDA)" \
  "${RUN[@]}" "$ROOT/bench/bench_fit.py" --gpu --only mlp,cnn,cnnbn,lstm,transformer --repeats 3

# 5. register use and spills per kernel
if [ -n "$SO" ]; then
  TAIL=400 section "cuobjdump --dump-resource-usage" cuobjdump --dump-resource-usage "$SO"
fi

echo "Overall: $([ $FAILED -eq 0 ] && echo PASS || echo FAIL)" >>"$REPORT"
echo "gpu_check: $([ $FAILED -eq 0 ] && echo PASS || echo FAIL) (report: $REPORT)" >&2
exit $FAILED
