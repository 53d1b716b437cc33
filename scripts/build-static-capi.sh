#!/usr/bin/env bash
# Links a self-contained compiler library: libGGemmCAPI.so with GGEMM's own
# archives and Debian's static MLIR and LLVM archives linked in, so that a
# GPU host without LLVM can compile kernels in process (ggemm's Python ops,
# GGEMM_COMPILER_LIB=...). It needs only libc, libstdc++, libz and libzstd
# at run time. Reuses the objects of an existing build (scripts/setup.sh).
#
#   bash scripts/build-static-capi.sh [build-dir] [out-dir]
#
# Writes OUT/libGGemmCAPI.so (stripped) and OUT/libGGemmCAPI.so.xz, and
# prints their sizes and the library's run-time dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-$build/static}
llvm_lib=/usr/lib/llvm-22/lib
mkdir -p "$out"
cmake --build "$build" --target GGemmCAPI > /dev/null
# Export only the C API; keep every static library's symbols local.
version_script=$(mktemp)
trap 'rm -f "$version_script"' EXIT
printf '{ global: ggemm*; local: *; };\n' > "$version_script"
g++ -shared -o "$out/libGGemmCAPI.unstripped.so" \
  -Wl,--gc-sections -Wl,--exclude-libs,ALL \
  -Wl,--version-script="$version_script" \
  "$build/lib/CAPI/CMakeFiles/GGemmCAPI.dir/GGemmCAPI.cpp.o" \
  -Wl,--start-group \
  "$build"/lib/libGGemmRegistration.a "$build"/lib/libGGemmPipelines.a \
  "$build"/lib/libGGemmConversion.a "$build"/lib/libGGemmTransforms.a \
  "$build"/lib/libGGemmDialect.a \
  "$llvm_lib"/libMLIR*.a "$llvm_lib"/libLLVM*.a \
  -Wl,--end-group \
  -lz /usr/lib/x86_64-linux-gnu/libzstd.so.1 -lpthread -ldl 2>&1 |
  { grep -v '^/usr/bin/ld: warning' || true; }
strip -o "$out/libGGemmCAPI.so" "$out/libGGemmCAPI.unstripped.so"
rm -f "$out/libGGemmCAPI.unstripped.so"
xz -T2 -6 -c "$out/libGGemmCAPI.so" > "$out/libGGemmCAPI.so.xz"
ls -la "$out/libGGemmCAPI.so" "$out/libGGemmCAPI.so.xz"
ldd "$out/libGGemmCAPI.so"
