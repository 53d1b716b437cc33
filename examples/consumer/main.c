/* The same through the C API. */
#include "ggemm-c/GGemm.h"

#include <stdio.h>
#include <string.h>

static const char *kSource =
    "func.func @f(%x: memref<?x128xf16>, %w: memref<2x64x128xf16>,\n"
    "             %n: memref<2xi32>, %y: memref<?x64xf16>) {\n"
    "  ggemm.segment_matmul ins(%x, %w : memref<?x128xf16>, "
    "memref<2x64x128xf16>)\n"
    "      segments(%n : memref<2xi32>) outs(%y : memref<?x64xf16>)\n"
    "  return\n"
    "}\n";

int main(void) {
  GGemmCompiler *compiler = ggemmCompilerCreate();
  GGemmModule *module = ggemmModuleParse(compiler, kSource, strlen(kSource));
  /* seg_indptr has G + 1 = 2 entries but w holds 2 weights: rejected. */
  if (module) {
    fprintf(stderr, "expected a verifier error\n");
    return 1;
  }
  printf("consumer-c: verifier said: %s", ggemmCompilerLastError(compiler));
  const char *fixed =
      "func.func @f(%x: memref<?x128xf16>, %w: memref<1x64x128xf16>,"
      " %n: memref<2xi32>, %y: memref<?x64xf16>) {"
      " ggemm.segment_matmul ins(%x, %w : memref<?x128xf16>,"
      " memref<1x64x128xf16>) segments(%n : memref<2xi32>)"
      " outs(%y : memref<?x64xf16>) return }";
  module = ggemmModuleParse(compiler, fixed, strlen(fixed));
  if (!module ||
      ggemmModuleRunPipeline(module, "ggemm-select-config,ggemm-tile")) {
    fprintf(stderr, "%s\n", ggemmCompilerLastError(compiler));
    return 2;
  }
  char *text = ggemmModulePrint(module, 0);
  int ok = strstr(text, "ggemm.foreach_tile") != NULL;
  printf("consumer-c: tiled module %s ggemm.foreach_tile\n",
         ok ? "has" : "lacks");
  ggemmFreeString(text);
  ggemmModuleDestroy(module);
  ggemmCompilerDestroy(compiler);
  return ok ? 0 : 3;
}
