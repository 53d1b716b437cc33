/*===- ggemm-c/GGemm.h - C API of the ggemm compiler ---------------*- C -*-===*
 *
 * A small C API for embedding the compiler (and the base of the Python
 * package): create a context with the ggemm dialect and passes registered,
 * parse a module, run a named pipeline, print the result, export kernel
 * bundles. Strings returned by the API are owned by the caller and released
 * with ggemmFreeString.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GGEMM_C_GGEMM_H
#define GGEMM_C_GGEMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GGemmCompiler GGemmCompiler;
typedef struct GGemmModule GGemmModule;

/** Creates a compiler context with ggemm and the upstream dialects, passes
 *  and pipelines it needs registered. Never returns NULL.
 *
 *  The context is multithreaded: the kernels of a module (the tile variants
 *  of a problem op) are compiled in parallel on a thread pool shared by all
 *  compilers of the process, one thread per hardware thread, or
 *  GGEMM_COMPILER_THREADS threads when that variable is set when the first
 *  compiler is created. GGEMM_COMPILER_THREADS=1 when a compiler is created
 *  makes that compiler single-threaded. */
GGemmCompiler *ggemmCompilerCreate(void);
void ggemmCompilerDestroy(GGemmCompiler *compiler);

/** Diagnostics of the last failed call on this compiler ("" if none). The
 *  pointer stays valid until the next call. */
const char *ggemmCompilerLastError(GGemmCompiler *compiler);

/** Parses (and verifies) MLIR text. Returns NULL on error. Diagnostics
 *  (see LastError) name the source `<source>`. */
GGemmModule *ggemmModuleParse(GGemmCompiler *compiler, const char *source,
                              size_t length);
/** As ggemmModuleParse; diagnostics name the source `source_name` (a file
 *  name, say): "moe.mlir:3:5: error: ...". */
GGemmModule *ggemmModuleParseNamed(GGemmCompiler *compiler, const char *source,
                                   size_t length, const char *source_name);
void ggemmModuleDestroy(GGemmModule *module);

/** Runs a textual pass pipeline on the module, e.g.
 *  "ggemm-to-ptx{chip=sm_90a}" or "ggemm-select-config,ggemm-tile".
 *  Returns 0 on success, nonzero on failure (see LastError). */
int ggemmModuleRunPipeline(GGemmModule *module, const char *pipeline);

/** Prints the module; generic != 0 prints the generic op form. */
char *ggemmModulePrint(GGemmModule *module, int generic);

/** Writes <dir>/<kernel>.{ptx,cubin,json} for each kernel of a module
 *  compiled with ggemm-to-ptx. Returns 0 on success. */
int ggemmModuleExportBundles(GGemmModule *module, const char *dir);

void ggemmFreeString(char *string);

#ifdef __cplusplus
}
#endif

#endif /* GGEMM_C_GGEMM_H */
