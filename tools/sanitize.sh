#!/usr/bin/env bash
# sanitize.sh: the CPU test suite under AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   bash tools/sanitize.sh [pytest arguments]      (default: the whole suite, tests/)
#
# What it does:
#   1. Builds fkeras._C with -fsanitize=address,undefined -fno-omit-frame-pointer (GCC or
#      Clang, whichever cmake picks) into build/sanitize/ (FKERAS_SANITIZE_DIR overrides), never
#      touching build/dev or the normal python/fkeras/_C*.so.
#   2. Copies the Python package to build/sanitize/pkg/fkeras with the instrumented _C in it.
#   3. Runs pytest on that copy with the ASan runtime preloaded (Python itself is not
#      instrumented, so libasan must come first, with libstdc++ right after it),
#      ASAN_OPTIONS=detect_leaks=0 (CPython keeps
#      objects alive until exit by design; leak reports would be noise) and
#      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 (an undefined-behaviour report stops the
#      run). Every report also goes to build/sanitize/reports/.
#   4. Prints the pytest summary and the number of sanitizer reports; exits non-zero when a
#      test failed or anything was reported.
# Not part of CI: the instrumented suite takes several times as long as the normal one. Needs
# cmake, a C++ compiler with the sanitizer runtimes (libasan, libubsan), pybind11 and pytest in
# the Python that runs it (PYTHON, default: python3).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
OUT=${FKERAS_SANITIZE_DIR:-$ROOT/build/sanitize}
PKG=$OUT/pkg
REPORTS=$OUT/reports
SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"

VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/python/fkeras/_version.py")
GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)

echo "== building the instrumented _C in $OUT/build"
cmake -S "$ROOT" -B "$OUT/build" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFKERAS_CUDA=OFF -DSKBUILD_PROJECT_VERSION="$VERSION" -DPython_EXECUTABLE="$(command -v "$PY")" \
  -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)" \
  -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" -DCMAKE_MODULE_LINKER_FLAGS="$SAN" \
  >/dev/null
cmake --build "$OUT/build" -j "${FKERAS_SANITIZE_JOBS:-2}"

echo "== copying the package to $PKG"
rm -rf "$PKG" "$REPORTS"
mkdir -p "$PKG" "$REPORTS"
cp -r "$ROOT/python/fkeras" "$PKG/"
rm -f "$PKG"/fkeras/_C*.so "$PKG"/fkeras/_C_cuda*.so
cp "$OUT"/build/_C*.so "$PKG/fkeras/"
find "$PKG" -name __pycache__ -prune -exec rm -rf {} +

CXX_USED=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$OUT/build/CMakeCache.txt")
ASAN_LIB=$("$CXX_USED" -print-file-name=libasan.so)
if [ ! -e "$ASAN_LIB" ]; then  # clang names its runtime differently
  ASAN_LIB=$("$CXX_USED" -print-file-name=libclang_rt.asan-x86_64.so)
fi
[ -e "$ASAN_LIB" ] || { echo "sanitize.sh: cannot find the ASan runtime of $CXX_USED" >&2; exit 2; }
# libstdc++ preloaded too: ASan resolves the real __cxa_throw when it starts, and would find
# none if the C++ runtime only arrived later with the extension (the first C++ throw aborts).
PRELOAD="$ASAN_LIB $("$CXX_USED" -print-file-name=libstdc++.so)"

echo "== running the tests on the instrumented build (LD_PRELOAD=$PRELOAD)"
cd "$ROOT"
set +e
env LD_PRELOAD="$PRELOAD" \
  ASAN_OPTIONS="detect_leaks=0:log_path=$REPORTS/asan:abort_on_error=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$REPORTS/ubsan" \
  PYTHONPATH="$PKG" FKERAS_SANITIZED=1 PYTHONDONTWRITEBYTECODE=1 \
  "$PY" -m pytest -q -p no:cacheprovider "${@:-tests}" 2>&1 | tee "$OUT/pytest.log" | tail -n 25
status=${PIPESTATUS[0]}
set -e

# The instrumented module must be the one the tests imported.
env LD_PRELOAD="$PRELOAD" ASAN_OPTIONS=detect_leaks=0 PYTHONPATH="$PKG" "$PY" -c \
  "import fkeras._C as c, sys; p = c.__file__; print('module:', p); sys.exit(0 if p.startswith('$PKG') else 1)"

reports=$(find "$REPORTS" -type f | wc -l)
echo "== pytest exit status $status; sanitizer reports: $reports (in $REPORTS)"
for f in $(find "$REPORTS" -type f | head -n 5); do echo "--- $f"; head -n 40 "$f"; done
[ "$status" -eq 0 ] && [ "$reports" -eq 0 ]
