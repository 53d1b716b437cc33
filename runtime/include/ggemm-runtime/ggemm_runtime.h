/*===- ggemm_runtime.h - GGEMM kernel-bundle runtime C API ---------*- C -*-===*
 *
 * Loads a kernel bundle written by the GGEMM compiler (a manifest NAME.json
 * next to NAME.cubin and/or NAME.ptx) and launches it on a caller's stream
 * with the CUDA driver API. See docs/Runtime.md for the manifest format.
 *
 * The library loads the CUDA driver (libcuda.so.1) at run time, so it links
 * and loads on machines without one; calls that need the driver then fail with
 * GGEMM_ERROR_NO_DRIVER. Argument validation never needs the driver.
 *
 * Every function that returns a ggemm_status also sets the calling thread's
 * last-error message (an empty string on success), read with
 * ggemm_last_error().
 *
 *===----------------------------------------------------------------------===*/

#ifndef GGEMM_RUNTIME_GGEMM_RUNTIME_H
#define GGEMM_RUNTIME_GGEMM_RUNTIME_H

#include <stdint.h>

#if defined(_WIN32)
#define GGEMM_RUNTIME_API
#else
#define GGEMM_RUNTIME_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct layout or a function signature below changes, so
 * that bindings (python/ggemm) can refuse a library they do not match.
 * 2: multi-variant bundles (ggemm_kernel_launch_hinted,
 * ggemm_kernel_num_variants, ggemm_kernel_select_variant). */
#define GGEMM_RUNTIME_ABI_VERSION 2

typedef enum ggemm_status {
  GGEMM_OK = 0,
  /* A caller's argument is wrong: null handle, missing or unknown tensor,
   * dtype, rank, shape, stride or alignment mismatch, memory of another
   * device. */
  GGEMM_ERROR_INVALID_ARGUMENT = 1,
  /* The manifest is not valid JSON or breaks the format of docs/Runtime.md. */
  GGEMM_ERROR_BAD_MANIFEST = 2,
  /* libcuda.so.1 cannot be loaded, is a stub, is older than CUDA 12.0, or
   * cuInit fails (no device). */
  GGEMM_ERROR_NO_DRIVER = 3,
  /* A driver call failed; the message names the call and the CUresult. */
  GGEMM_ERROR_CUDA = 4,
  /* Valid request this runtime or device cannot run (wrong compute
   * capability, k = 0, too much shared memory, grid too large). */
  GGEMM_ERROR_UNSUPPORTED = 5,
  /* A file of the bundle cannot be read. */
  GGEMM_ERROR_IO = 6,
  /* The calling thread has no current CUDA context. */
  GGEMM_ERROR_NO_CONTEXT = 7,
  /* A bug or an exhausted host resource (out of host memory). */
  GGEMM_ERROR_INTERNAL = 8
} ggemm_status;

typedef enum ggemm_dtype {
  GGEMM_DTYPE_BF16 = 0,
  GGEMM_DTYPE_F16 = 1,
  GGEMM_DTYPE_F32 = 2,
  GGEMM_DTYPE_F8E4M3 = 3,
  GGEMM_DTYPE_F8E5M2 = 4,
  GGEMM_DTYPE_I32 = 5,
  GGEMM_DTYPE_I64 = 6,
  /* Signed 8-bit integers: the operands of INT8 GEMMs (s8 x s8 -> s32
   * wgmma, dequantised by tensor-wise or per-row scales). Appended: the
   * values above are ABI and never change. */
  GGEMM_DTYPE_S8 = 7
} ggemm_dtype;

#define GGEMM_MAX_RANK 4

/* A caller's tensor, passed by name. `shape` and `strides` hold `rank`
 * entries, outermost first (PyTorch order); strides count elements, not
 * bytes. `data` is a device pointer in the current context's device. */
typedef struct ggemm_tensor {
  const char *name;
  void *data;
  ggemm_dtype dtype;
  int rank;
  int64_t shape[GGEMM_MAX_RANK];
  int64_t strides[GGEMM_MAX_RANK];
} ggemm_tensor;

typedef struct ggemm_kernel ggemm_kernel;

/* Returns GGEMM_RUNTIME_ABI_VERSION of the library actually loaded. */
GGEMM_RUNTIME_API int ggemm_runtime_abi_version(void);

/* The enumerator name of `status` ("GGEMM_ERROR_CUDA"); never null. */
GGEMM_RUNTIME_API const char *ggemm_status_name(ggemm_status status);

/* The message of the last call on this thread: empty after a success, else
 * what failed, with expected and actual values. Valid until the next call of
 * this library on the same thread; never null. */
GGEMM_RUNTIME_API const char *ggemm_last_error(void);

/* Reads and checks the manifest at `manifest_path` and reads the cubin/PTX it
 * names (paths relative to the manifest's directory). Needs no driver: the
 * module is loaded into a context lazily, by the first launch (or
 * ggemm_kernel_prepare) in that context. On failure *out is set to null. */
GGEMM_RUNTIME_API ggemm_status ggemm_kernel_load(const char *manifest_path,
                                                 ggemm_kernel **out);

/* Loads the module (of every variant) into the current context now (cubin
 * first, PTX if there is no cubin or the cubin does not load) and checks the
 * device. Optional: call
 * it before capturing a launch into a CUDA graph so that the capture does no
 * module loading. */
GGEMM_RUNTIME_API ggemm_status ggemm_kernel_prepare(ggemm_kernel *kernel);

/* Validates the tensors against the manifest, encodes the TMA descriptors and
 * launches on `cu_stream` (a CUstream; null is the legacy default stream) in
 * the current context. Never synchronises and never reads device memory, so
 * it may be captured into a CUDA graph. When the problem has no tiles (no rows
 * or no groups or n = 0, or a scattered y of no rows; for segment_matmul_k no
 * groups or n or k = 0, while no token rows still launch, as every gradient
 * is written) it launches nothing and returns GGEMM_OK; a sort_by_expert
 * (routing) kernel always launches its one CTA, no pairs included. Safe to
 * call from several threads on one kernel. */
GGEMM_RUNTIME_API ggemm_status ggemm_kernel_launch(ggemm_kernel *kernel,
                                                   const ggemm_tensor *tensors,
                                                   int num_tensors,
                                                   void *cu_stream);

/* As ggemm_kernel_launch, with the caller's expected rows per group (for
 * masked_matmul DeepGEMM's expected_m; 0: no hint) for a multi-variant
 * bundle's dispatch rule (docs/Runtime.md, "Variants"): the variant is
 * chosen on the host from the tensor shapes and the hint alone, so a launch
 * captured into a CUDA graph keeps the variant chosen at capture. The hint
 * never changes the result, only which kernel computes it; a negative one is
 * GGEMM_ERROR_INVALID_ARGUMENT. */
GGEMM_RUNTIME_API ggemm_status ggemm_kernel_launch_hinted(
    ggemm_kernel *kernel, const ggemm_tensor *tensors, int num_tensors,
    int64_t expected_m, void *cu_stream);

/* The number of kernel variants the bundle carries (1 for a version 1
 * manifest). */
GGEMM_RUNTIME_API ggemm_status
ggemm_kernel_num_variants(const ggemm_kernel *kernel, int *count);

/* The index, in the manifest's `variants`, of the variant a launch with
 * these tensors and hint would use (0 for a single-variant bundle), after
 * checking the tensors as a launch does. Needs no driver. */
GGEMM_RUNTIME_API ggemm_status ggemm_kernel_select_variant(
    const ggemm_kernel *kernel, const ggemm_tensor *tensors, int num_tensors,
    int64_t expected_m, int *variant);

/* The grid.x that ggemm_kernel_launch would use (0 when it would launch
 * nothing). The "persistent" policy needs the multiprocessor count of the
 * current context's device, hence the driver. */
GGEMM_RUNTIME_API ggemm_status ggemm_kernel_grid(const ggemm_kernel *kernel,
                                                 const ggemm_tensor *tensors,
                                                 int num_tensors, int *grid_x);

/* As ggemm_kernel_grid, for a device of `sm_count` multiprocessors; needs no
 * driver. */
GGEMM_RUNTIME_API ggemm_status ggemm_kernel_grid_for_sm_count(
    const ggemm_kernel *kernel, const ggemm_tensor *tensors, int num_tensors,
    int sm_count, int *grid_x);

/* Unloads the modules the kernel loaded (errors ignored) and frees it. Null
 * is a no-op. */
GGEMM_RUNTIME_API void ggemm_kernel_destroy(ggemm_kernel *kernel);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GGEMM_RUNTIME_GGEMM_RUNTIME_H */
