#!/usr/bin/env bash
# Runs every CPU test: the lit suite (check-ggemm), the runtime's and the
# C++ unit tests (ctest), the Python tests (pytest), the out-of-tree
# consumer build and a short seeded fuzz campaign of gemm-opt. Prints one
# closing line `tests: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
log=$(mktemp -d)
passed=0
failed=0

echo "== lit (check-ggemm)"
# A test that writes out of bounds can hang mlir-runner instead of failing:
# give each test a time limit (lit needs python3-psutil for it).
export LIT_OPTS="${LIT_OPTS:-} --timeout=300"
cmake --build "$BUILD_DIR" --target check-ggemm 2>&1 | tee "$log/lit.txt"
lit_rc=${PIPESTATUS[0]}
p=$(grep -Eo 'Passed *: *[0-9]+' "$log/lit.txt" | grep -Eo '[0-9]+$' | tail -1)
f=$(grep -Eo '(Failed|Unresolved|Timed Out|Unexpectedly Passed) *: *[0-9]+' \
      "$log/lit.txt" | grep -Eo '[0-9]+$' | awk '{s+=$1} END {print s+0}')
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-0}))
if [ "$lit_rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then failed=$((failed + 1)); fi

echo "== ctest"
ctest --test-dir "$BUILD_DIR" --output-on-failure 2>&1 | tee "$log/ctest.txt"
ctest_rc=${PIPESTATUS[0]}
# ctest closes with "NN% tests passed, F tests failed out of T".
summary=$(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$log/ctest.txt" | tail -1)
if [ -n "$summary" ]; then
  f=$(echo "$summary" | awk '{print $1}')
  total=$(echo "$summary" | awk '{print $NF}')
  passed=$((passed + total - f))
  failed=$((failed + f))
fi
if [ "$ctest_rc" -ne 0 ] && [ -z "$summary" ]; then failed=$((failed + 1)); fi

echo "== pytest"
# In an ASan build (scripts/build-checked.sh asan) python loads instrumented
# libraries through ctypes: the ASan runtime must be preloaded, CPython's
# own leaks at exit are not ours, and a report must reach the log rather
# than pytest's captured (and, on abort, lost) file descriptor 2.
python_env=()
preload=$(sed -n 's/^GGEMM_SANITIZER_PRELOAD:INTERNAL=//p' \
            "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
if [ -n "$preload" ]; then
  python_env=(LD_PRELOAD="$preload" PYTEST_ADDOPTS="--capture=sys"
              ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}")
fi
GGEMM_BUILD_DIR="$PWD/$BUILD_DIR" env "${python_env[@]}" /usr/bin/python3 -m pytest -q -p no:cacheprovider test/python 2>&1 | tee "$log/pytest.txt"
py_rc=${PIPESTATUS[0]}
p=$(grep -Eo '[0-9]+ passed' "$log/pytest.txt" | grep -Eo '^[0-9]+' | tail -1)
f=$(grep -Eo '[0-9]+ (failed|error)' "$log/pytest.txt" | grep -Eo '^[0-9]+' | awk '{s+=$1} END {print s+0}')
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-0}))
# pytest exits 5 when it collected nothing; anything else nonzero is a failure.
if [ "$py_rc" -ne 0 ] && [ "$py_rc" -ne 5 ] && [ "${f:-0}" -eq 0 ]; then failed=$((failed + 1)); fi

echo "== out-of-tree consumer (find_package(GGEMM))"
if bash examples/consumer/build.sh "$BUILD_DIR" > "$log/consumer.txt" 2>&1; then
  tail -3 "$log/consumer.txt"
  passed=$((passed + 1))
else
  cat "$log/consumer.txt"
  failed=$((failed + 1))
fi

echo "== fuzz (gemm-opt, seeded)"
# One test: a fixed campaign (the same mutants every run) passes with no
# crash and no hang. Reproducers go to $BUILD_DIR/fuzz; see
# README.md ("Fuzzing and checked builds") for longer campaigns.
if /usr/bin/python3 test/fuzz/fuzz_gemm_opt.py \
     --gemm-opt "$BUILD_DIR/bin/gemm-opt" --count "${FUZZ_COUNT:-3000}" \
     --seed 1 --jobs "$(nproc)" --quiet --out "$BUILD_DIR/fuzz" \
     > "$log/fuzz.txt" 2>&1; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
fi
cat "$log/fuzz.txt"

echo "tests: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
