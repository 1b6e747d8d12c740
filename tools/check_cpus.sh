#!/usr/bin/env bash
# The test suite under every OpenBLAS kernel this CPU can run, at 1 and 2 threads (BLAS's
# and the framework's own, MINITORCH_ACCEL_NUM_THREADS, set alike).
#
# A numeric test must not depend on the CPU model, the BLAS kernel or the thread count:
# CI runs on whatever machine it is given (Intel one day, AMD the next). OpenBLAS picks
# its kernels from the CPU, and OPENBLAS_CORETYPE forces another choice. OpenBLAS does not
# check that a forced kernel is supported, so SkylakeX (AVX-512) runs only where
# /proc/cpuinfo lists avx512f. Usage: make check-cpus [PYTEST_ARGS="-x tests/test_amp.py"]
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
cores=(Haswell SkylakeX Zen)
threads=(1 2)
results=()
status=0
for core in "${cores[@]}"; do
  if [ "$core" = SkylakeX ] && ! grep -qw avx512f /proc/cpuinfo; then
    results+=("$core: skipped (this CPU has no avx512f)")
    continue
  fi
  for n in "${threads[@]}"; do
    arch=$(OPENBLAS_CORETYPE=$core "$PYTHON" -c \
      "import numpy; from threadpoolctl import threadpool_info as t; print(*[i.get('architecture') for i in t() if i['internal_api'] == 'openblas'])" 2>/dev/null)
    echo "== OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$n MINITORCH_ACCEL_NUM_THREADS=$n (OpenBLAS reports: ${arch:-?})"
    start=$(date +%s)
    # shellcheck disable=SC2086
    OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS=$n MINITORCH_ACCEL_NUM_THREADS=$n \
      "$PYTHON" -m pytest -p no:cacheprovider ${PYTEST_ARGS:-} 2>&1 | tail -n 15
    rc=${PIPESTATUS[0]}
    took=$(( $(date +%s) - start ))
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]; then
      results+=("$core, $n threads (${arch:-?}): passed in ${took} s")
    else
      results+=("$core, $n threads (${arch:-?}): FAILED (exit $rc) in ${took} s")
      status=1
    fi
  done
done
echo
echo "== check-cpus summary"
printf '%s\n' "${results[@]}"
exit $status
