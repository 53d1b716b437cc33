#!/usr/bin/env bash
# Regenerates the op, attribute, type and pass references in docs/ from ODS.
#
#   scripts/update-docs.sh            # build `mlir-doc`, copy into docs/
#   scripts/update-docs.sh --check    # fail if docs/ is not up to date
#
# add_mlir_doc writes <build>/docs/GGemm/*.md; each file is copied with a
# title and a pointer to the .td it comes from. BUILD_DIR defaults to build.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
check=0
if [ "${1:-}" = "--check" ]; then
  check=1
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--check]" >&2
  exit 2
fi

cmake --build "$BUILD_DIR" --target mlir-doc >/dev/null

generated="$BUILD_DIR/docs/GGemm"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# name | title | source
while IFS='|' read -r name title source; do
  if [ ! -f "$generated/$name.md" ]; then
    echo "error: $generated/$name.md was not generated" >&2
    exit 1
  fi
  {
    echo "# $title"
    echo
    echo "Generated from \`$source\` by \`scripts/update-docs.sh\`; edit the"
    echo ".td file, not this page."
    echo
    cat "$generated/$name.md"
  } > "$out/$name.md"
done <<'LIST'
GGemmOps|`ggemm` operations|include/ggemm/Dialect/GGemm/IR/GGemmOps.td
GGemmAttrs|`ggemm` attributes|include/ggemm/Dialect/GGemm/IR/GGemmAttrs.td
GGemmTypes|`ggemm` types|include/ggemm/Dialect/GGemm/IR/GGemmOps.td
GGemmPasses|`ggemm` passes|include/ggemm/Dialect/GGemm/Transforms/Passes.td
GGemmConversionPasses|`ggemm` conversion passes|include/ggemm/Conversion/Passes.td
LIST

status=0
for file in "$out"/*.md; do
  name=$(basename "$file")
  if [ "$check" -eq 1 ]; then
    if ! cmp -s "$file" "docs/$name"; then
      echo "docs/$name is out of date: run scripts/update-docs.sh" >&2
      status=1
    fi
  else
    cp "$file" "docs/$name"
    echo "docs/$name"
  fi
done
exit "$status"
