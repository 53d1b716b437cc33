//===- LaunchBench.cpp - Host time of ggemm_kernel_launch -----------------===//
//
// Times ggemm_kernel_launch against the fake driver (no GPU): what the
// runtime itself costs per call (validation, driver bookkeeping, descriptor
// encoding through the fake, parameter packing), without Python. The fake's
// driver calls are cheap and take a mutex each, so the real driver adds its
// own cost on top (cuTensorMapEncodeTiled, cuPointerGetAttribute and
// cuLaunchKernelEx).
//
//   ggemm-runtime-launch-bench [launches]
//
//===----------------------------------------------------------------------===//

#include "ggemm-runtime/ggemm_runtime.h"

#include "TestSupport.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#ifndef GGEMM_FAKE_CUDA_DRIVER_PATH
#error "GGEMM_FAKE_CUDA_DRIVER_PATH must name the fake driver"
#endif

using namespace ggemm::runtime;

namespace {

double nanosecondsPerLaunch(ggemm_kernel *kernel, const ggemm_tensor *tensors,
                            int count, int launches) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i)
    if (ggemm_kernel_launch(kernel, tensors, count, nullptr) != GGEMM_OK) {
      std::fprintf(stderr, "launch failed: %s\n", ggemm_last_error());
      std::exit(1);
    }
  std::chrono::duration<double, std::nano> elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count() / launches;
}

} // namespace

int main(int argc, char **argv) {
  int launches = argc > 1 ? std::atoi(argv[1]) : 200000;
  setenv("GGEMM_CUDA_DRIVER", GGEMM_FAKE_CUDA_DRIVER_PATH, 0);
  test::TempDir dir;
  ggemm_kernel *kernel = nullptr;
  std::string path = dir.writeBundle(test::kSegmentManifest);
  if (ggemm_kernel_load(path.c_str(), &kernel) != GGEMM_OK) {
    std::fprintf(stderr, "load failed: %s\n", ggemm_last_error());
    return 1;
  }
  test::SegmentTensors tensors;
  const ggemm_tensor *list = tensors.get();
  nanosecondsPerLaunch(kernel, list, 4, launches / 10); // warm up
  double same = nanosecondsPerLaunch(kernel, list, 4, launches);
  std::printf("ggemm_kernel_launch, same tensors every call: %.0f ns\n", same);
  // A new x address every call: x's descriptor is encoded every time.
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) {
    tensors.list[0].data =
        reinterpret_cast<void *>(test::kX + 16 * static_cast<uintptr_t>(i));
    if (ggemm_kernel_launch(kernel, list, 4, nullptr) != GGEMM_OK) {
      std::fprintf(stderr, "launch failed: %s\n", ggemm_last_error());
      return 1;
    }
  }
  std::chrono::duration<double, std::nano> elapsed =
      std::chrono::steady_clock::now() - start;
  std::printf("ggemm_kernel_launch, new x address every call: %.0f ns\n",
              elapsed.count() / launches);
  ggemm_kernel_destroy(kernel);
  return 0;
}
