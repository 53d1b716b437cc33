#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool): builds the CUDA runtime
# with CMake (no LLVM there), then the GPU checks and the benchmark on the
# bundles carried in .device/bundles (.device/bundles_fp8 for the fp8 step,
# FP8 and INT8 kernels; FP8_BENCH=1 to time them too, FP8_BENCH_KINDS="int8"
# (block, scaled, int8) to time only some tables, FP8_BUNDLES=DIR to check and time other FP8 bundles, FP8_BASELINE=DIR to time earlier FP8 bundles
# in the same run, FP8_FLUSH=write to evict L2 by a write instead of a read
# before each timed launch (fp8 and fp8-decode steps; bench/NOTES.md v25); .device/bundles_kragged for the kragged step, KRAGGED_BENCH=1
# to time them against torch too, KRAGGED_BASELINE=DIR to time earlier ones in
# the same run, with .device/bundles_kragged_ablation
# (build_kragged_ablation.sh) to show the check fails without the mask;
# .device/bundles_kragged_fp8 for the kragged-fp8 step (KRAGGED_BENCH=1 times
# it against the bf16 kernels and peers); for the python step, the catalog in
# .device/python_catalog: test/gpu/build_python_catalog.sh). Results go to
# $OUT.
# For the quantize step, the catalog in .device/quantize_catalog
# (build_bundles.sh; QUANTIZE_BENCH=1 to time it too).
#   bash test/gpu/run_on_device.sh [check] [bench] [safety] [load] [fp8] [pdl] [kragged] [kragged-fp8] [swap] [static] [latency] [peer-latency] [python] [moe] [moe-example] [ep] [quantize] [fp8out-bench] [profile] [profile-walk] [profile-fp8out] [profile-fp8-decode] [profile-pingpong] [profile-swizzle] [fp8-decode] [fp8-stride] [throughput] [clocks] [fp8-safety] | all
# BASELINE=.device/bundles_<commit> (bench/build_baseline.sh) makes the
# benchmark time those kernels against the new ones in the same run,
# REPEATS (default 5) times each, alternating. CASES (default 240) and
# SAFETY_CASES (default 300) set the number of random cases.
# The sanitizer steps show device backtraces only: with host backtraces (the
# default) compute-sanitizer 2025.3 keeps the Python frames of the checks
# alive, and with them every tensor they held (bench/NOTES.md v44: 1.3 GB
# after 3 FP8 cases, the H200's 139 GB after 162).
set -uo pipefail
cd "$(dirname "$0")/../.."
steps=${*:-all}
[ "$steps" = all ] && steps="check bench safety load fp8 swap python"
OUT=${OUT:-/tmp/ggemm-out}
mkdir -p "$OUT"
commit=$(cat .device/bundles/COMMIT 2>/dev/null || echo unknown)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"
# The image has no nlohmann/json: build_bundles.sh carries the header.
prefix=()
[ -d .device/nlohmann ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.device/nlohmann")
cmake -S runtime -B /tmp/build-rt -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGGEMM_RUNTIME_BUILD_TESTS=OFF "${prefix[@]}" > "$OUT/rt-build.log" 2>&1 &&
  cmake --build /tmp/build-rt -j 16 >> "$OUT/rt-build.log" 2>&1 || { tail -30 "$OUT/rt-build.log"; exit 1; }
export GGEMM_RUNTIME_LIB=$(find /tmp/build-rt -name 'libggemm_runtime.so' | head -1)
export PYTHONUNBUFFERED=1 GGEMM_COMMIT=$commit
rc=0
for step in $steps; do
  case $step in
  check)
    python3 test/gpu/check_e2e.py --bundles .device/bundles --cases "${CASES:-240}" \
      --report "$OUT/e2e.md" 2>&1 | tee "$OUT/check.log" | grep -v "PASS$" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  bench)
    python3 bench/bench_e2e.py --bundles .device/bundles ${BASELINE:+--baseline "$BASELINE"} \
      --repeats "${REPEATS:-5}" --report "$OUT/bench.md" \
      2>&1 | tee "$OUT/bench.log" || rc=1 ;;
  throughput)
    GGEMM_COMMIT=$(cat "${TP_BUNDLES:-.device/bundles}/COMMIT" 2>/dev/null || echo "$commit") \
    python3 bench/bench_throughput.py --bundles "${TP_BUNDLES:-.device/bundles}" \
      --repeats "${REPEATS:-3}" --report "$OUT/throughput.md" \
      ${TP_EXTRA:+--extra "$TP_EXTRA"} \
      2>&1 | tee "$OUT/throughput.log" || rc=1 ;;
  safety)
    compute-sanitizer --tool memcheck --show-backtrace device --report-api-errors no \
      python3 test/gpu/check_safety.py --bundles .device/bundles \
      --cases "${SAFETY_CASES:-300}" > "$OUT/safety.log" 2>&1 || rc=1
    grep -v "PASS$" "$OUT/safety.log" | tail -20 ;;
  load)
    python3 test/gpu/load_test.py --bundles .device/bundles \
      2>&1 | tee "$OUT/load.log" || rc=1 ;;
  fp8)
    # FP8_BUNDLES: another bundle directory to check and time (an experiment's
    # kernels), .device/bundles_fp8 by default.
    fp8_bundles=${FP8_BUNDLES:-.device/bundles_fp8}
    GGEMM_COMMIT=$(cat "$fp8_bundles/COMMIT" 2>/dev/null || echo "$commit") \
    python3 test/gpu/check_fp8.py --bundles "$fp8_bundles" \
      ${FP8_BENCH:+--bench} ${FP8_BENCH_KINDS:+--bench-kinds $FP8_BENCH_KINDS} \
      ${FP8_BASELINE:+--baseline "$FP8_BASELINE"} \
      ${FP8_TIMING:+--timing $FP8_TIMING} ${FP8_SKIP_CHECK:+--skip-check} \
      ${FP8_FLUSH:+--flush $FP8_FLUSH} \
      --report "$OUT/fp8${FP8_TIMING:+-$FP8_TIMING}${FP8_FLUSH:+-$FP8_FLUSH}.md" 2>&1 \
      | tee "$OUT/fp8${FP8_TIMING:+-$FP8_TIMING}${FP8_FLUSH:+-$FP8_FLUSH}.log" \
      | grep -v "PASS$" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  pdl)
    # Programmatic dependent launch (bench/bench_pdl.py): the FP8 decode
    # kernels back to back, with and without; .device/bundles_fp8_nopdl is
    # the dense kernels compiled with dependent-launch=false; PDL_ALSO: more
    # bundle directories of the same kernels, timed in the same rounds.
    GGEMM_COMMIT=$(cat .device/bundles_fp8/COMMIT 2>/dev/null || echo "$commit") \
    also=()
    for d in ${PDL_ALSO:-}; do also+=(--also "$d"); done
    python3 bench/bench_pdl.py --bundles .device/bundles_fp8 \
      --baseline .device/bundles_fp8_nopdl "${also[@]}" --report "$OUT/pdl.md" 2>&1 \
      | tee "$OUT/pdl.log" | tail -14
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  kragged)
    ablation=()
    [ -d .device/bundles_kragged_ablation ] &&
      ablation=(--ablation-bundles .device/bundles_kragged_ablation)
    GGEMM_COMMIT=$(cat .device/bundles_kragged/COMMIT 2>/dev/null || echo "$commit") \
    python3 test/gpu/check_kragged.py --bundles .device/bundles_kragged \
      ${KRAGGED_BENCH:+--bench} ${KRAGGED_BASELINE:+--baseline "$KRAGGED_BASELINE"} \
      "${ablation[@]}" --report "$OUT/kragged.md" 2>&1 \
      | tee "$OUT/kragged.log" | grep -v "PASS$" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  kragged-fp8)
    ablation=()
    [ -d .device/bundles_kragged_ablation_fp8 ] &&
      ablation=(--ablation-bundles .device/bundles_kragged_ablation_fp8)
    GGEMM_COMMIT=$(cat .device/bundles_kragged_fp8/COMMIT 2>/dev/null || echo "$commit") \
    python3 test/gpu/check_kragged_fp8.py --bundles .device/bundles_kragged_fp8 \
      --bf16-bundles .device/bundles_kragged ${KRAGGED_BENCH:+--bench} \
      ${KRAGGED_FP8_VARIANTS:+--variant-bundles "$KRAGGED_FP8_VARIANTS"} \
      "${ablation[@]}" --report "$OUT/kragged_fp8.md" 2>&1 \
      | tee "$OUT/kragged_fp8.log" | grep -v "PASS$" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  swap)
    python3 bench/bench_swap_ab.py --bundles .device/bundles_swap \
      --static-bundles .device/bundles --report "$OUT/swap.md" \
      2>&1 | tee "$OUT/swap.log" || rc=1 ;;
  static)
    # The self-contained compiler library (scripts/build-static-capi.sh),
    # carried compressed: kernels are compiled on this host, with no LLVM
    # or MLIR library of its own in use.
    mkdir -p /tmp/ggemm-static && xz -dc .device/static/libGGemmCAPI.so.xz \
      > /tmp/ggemm-static/libGGemmCAPI.so &&
    GGEMM_COMPILER_LIB=/tmp/ggemm-static/libGGemmCAPI.so \
      python3 test/gpu/check_static_compiler.py --report "$OUT/static.md" \
      --commit "$(cat .device/static/COMMIT 2>/dev/null || echo unknown)" \
      2>&1 | tee "$OUT/static.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  latency)
    # Compile latency on this many-core host with the self-contained compiler
    # library (bench/compile_latency.py; no gemm-opt here, so no pass table).
    mkdir -p /tmp/ggemm-static && xz -dc .device/static/libGGemmCAPI.so.xz \
      > /tmp/ggemm-static/libGGemmCAPI.so &&
    GGEMM_COMMIT="$(cat .device/static/COMMIT 2>/dev/null || echo unknown) (static library)" \
    GGEMM_BUILD_DIR=/nonexistent GGEMM_COMPILER_LIB=/tmp/ggemm-static/libGGemmCAPI.so \
      python3 bench/compile_latency.py --repeats 3 --jobs 4 ${LATENCY_ARGS:---opt-levels 1} \
      --machine "GPU host ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)), idle, static compiler library of $(cat .device/static/COMMIT)" \
      --report "$OUT/latency.md" 2>&1 | tee "$OUT/latency.log" | tail -5
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  peer-latency)
    # Triton's compile latency on this host (bench/peer_compile_latency.py):
    # an empty cache, then its disk cache from a new process.
    # GGEMM_COMMIT names the script's tree (PEER_COMMIT, else the bundles').
    rm -rf /tmp/ggemm-triton-cache
    GGEMM_COMMIT=${PEER_COMMIT:-$commit} python3 bench/peer_compile_latency.py \
      --cache-dir /tmp/ggemm-triton-cache --phase cold \
      --report "$OUT/triton-cold.md" 2>&1 | tail -1 &&
      GGEMM_COMMIT=${PEER_COMMIT:-$commit} python3 bench/peer_compile_latency.py \
        --cache-dir /tmp/ggemm-triton-cache --phase warm \
        --report "$OUT/triton-warm.md" 2>&1 | tail -1 || rc=1 ;;
  python)
    GGEMM_COMMIT=$(cat .device/python_catalog/COMMIT 2>/dev/null || echo "$commit") \
    python3 test/gpu/check_python.py --catalog .device/python_catalog \
      --report "$OUT/python.md" 2>&1 | tee "$OUT/python.log" | grep -v " PASS" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  moe)
    # The MoE FFN without glue (issue 13): the catalog in .device/moe_catalog
    # (test/gpu/build_moe_catalog.sh); MOE_BENCH=1 times it against the
    # glued layer too.
    GGEMM_COMMIT=$(cat .device/moe_catalog/COMMIT 2>/dev/null || echo "$commit") \
    python3 test/gpu/check_moe.py --catalog .device/moe_catalog \
      ${MOE_BENCH:+--bench} ${MOE_ALT:+--alt-catalog "$MOE_ALT"} \
      ${MOE_ALT_LABEL:+--alt-label "$MOE_ALT_LABEL"} \
      --report "$OUT/moe.md" 2>&1 | tee "$OUT/moe.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  moe-example)
    # examples/moe_layer.py's checks (forward and backward against plain
    # torch, both combines, expert parallel over 2 simulated ranks) on a
    # small, a Qwen3-MoE-like and a DeepSeek-V3-like (64 experts) layer;
    # its kernels are in .device/moe_catalog (test/gpu/build_moe_catalog.sh).
    # MOE_EXAMPLE_BENCH=1 times the fused layer against the glued one too.
    GGEMM_COMMIT=$(cat .device/moe_catalog/COMMIT 2>/dev/null || echo "$commit") \
    python3 test/gpu/check_moe_example.py --catalog .device/moe_catalog \
      ${MOE_EXAMPLE_BENCH:+--bench} --report "$OUT/moe-example.md" 2>&1 \
      | tee "$OUT/moe-example.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  quantize)
    # The FP8 quantize kernel (ggemm.quantize) bit for bit against torch and
    # DeepGEMM's casts: the catalog in .device/quantize_catalog
    # (test/gpu/build_bundles.sh); QUANTIZE_BENCH=1 times it too.
    GGEMM_COMMIT=$(cat .device/quantize_catalog/COMMIT 2>/dev/null || echo "$commit") \
    python3 test/gpu/check_quantize.py --catalog .device/quantize_catalog \
      ${QUANTIZE_BENCH:+--bench} --report "$OUT/quantize.md" 2>&1 \
      | tee "$OUT/quantize.log" | grep -v " PASS" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  ep)
    # Expert parallelism over every GPU of the host (issue 16):
    # test/gpu/check_ep.py under torchrun, one process per GPU, kernels
    # from .device/moe_catalog; NVLink multicast off (KINDS.md).
    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    GGEMM_COMMIT=$(cat .device/moe_catalog/COMMIT 2>/dev/null || echo "$commit") \
    timeout "${EP_TIMEOUT:-480}" python3 -m torch.distributed.run --standalone \
      --nproc-per-node "$(nvidia-smi -L | wc -l)" test/gpu/check_ep.py \
      --catalog .device/moe_catalog ${EP_MODELS:+--models $EP_MODELS} \
      --report "$OUT/ep.md" 2>&1 | tee "$OUT/ep.log" | grep -v " PASS" || true
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    # The README's launcher: the example's own expert-parallel check at
    # its default (Qwen3-MoE-like) sizes.
    timeout 150 bash examples/moe_ep.sh --check --catalog .device/moe_catalog \
      --tokens 16 512 > "$OUT/example-ep.log" 2>&1 || rc=1
    grep -E "moe-example-ep|FAIL|Error" "$OUT/example-ep.log" | tail -5 ;;
  fp8out-bench)
    # The e4m3 output epilogue against the bf16 GEMM + ggemm.quantize
    # (bench/bench_fp8_out.py), kernels in .device/fp8out_catalog
    # (test/gpu/build_python_catalog.sh build .device/fp8out_catalog
    # bench/bench_fp8_out.py).
    GGEMM_COMMIT=$(cat .device/fp8out_catalog/COMMIT 2>/dev/null || echo "$commit") \
    python3 bench/bench_fp8_out.py --catalog .device/fp8out_catalog \
      --report "$OUT/fp8out.md" 2>&1 | tee "$OUT/fp8out.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  moe-safety)
    # compute-sanitizer memcheck of the MoE kernels on the small layer
    # (gathered and scattered indices outside x and y included).
    compute-sanitizer --tool memcheck --show-backtrace device --report-api-errors no \
      python3 test/gpu/check_moe.py --catalog .device/moe_catalog \
      --models small > "$OUT/moe-safety.log" 2>&1 || rc=1
    grep -E "gpu-check-moe|ERROR SUMMARY|FAIL" "$OUT/moe-safety.log" | tail -5 ;;
  profile-kragged-fp8)
    # NOTES v15: the FP8 K-ragged kernel against the bf16 one
    # (bench/profile_kragged_fp8.py).
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio \
      python3 bench/profile_kragged_fp8.py --fp8-bundles .device/bundles_kragged_fp8 \
      --bf16-bundles .device/bundles_kragged > "$OUT/profile-kragged-fp8.txt" 2>&1 || rc=1
    grep -E "profiling:|Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|pipe_tensor|pipe_fma|pipe_lsu|stalled|Executed Ipc" \
      "$OUT/profile-kragged-fp8.txt" | head -80
    # Warp-stall samples per SASS instruction of the FP8 kernel
    # (bench/ncu_source_summary.py reads the CSV).
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SourceCounters -k regex:kragged_fp8 -o "$OUT/kragged-fp8-source" \
      python3 bench/profile_kragged_fp8.py --fp8-bundles .device/bundles_kragged_fp8 \
      --bf16-bundles .device/bundles_kragged > /dev/null 2>&1 &&
      ncu --import "$OUT/kragged-fp8-source.ncu-rep" --page source --csv \
        --print-source sass 2> /dev/null | xz -9 > "$OUT/kragged-fp8-source.csv.xz" || rc=1
    rm -f "$OUT/kragged-fp8-source.ncu-rep"
    python3 bench/ncu_source_summary.py "$OUT/kragged-fp8-source.csv.xz" --top 24 || rc=1 ;;
  profile-walk)
    # NOTES v14: the 256-group shape, along-n and along-m kernels, the
    # bundles against BASELINE's (bench/profile_walk.py).
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats \
      python3 bench/profile_walk.py --bundles .device/bundles \
      --baseline "${BASELINE:?BASELINE=dir of the old bundles}" > "$OUT/profile-walk.txt" 2>&1 || rc=1
    grep -E "profiling:|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|L2 Hit Rate|DRAM Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" \
      "$OUT/profile-walk.txt" | head -80 ;;
  profile)
    # Hardware counters of one launch each (bench/profile_ncu.py; the FP8
    # kernels too with PROFILE_FP8=1); the
    # clocks are left alone (METHOD.md). The tensor-pipe metric is asked for
    # only where this ncu knows its name.
    extra=()
    want=sm__pipe_tensor_op_gmma_cycles_active
    ncu --query-metrics --chip gh100 2>/dev/null | grep -i -E "gmma|tensor_op" \
      > "$OUT/tensor-metrics.txt"
    grep -q "^$want " "$OUT/tensor-metrics.txt" &&
      extra=(--metrics "$want.avg.pct_of_peak_sustained_active,lts__t_bytes.sum.per_second")
    ncu --clock-control none --profile-from-start off --target-processes all "${extra[@]}" \
      --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section SchedulerStats --section LaunchStats --section Occupancy \
      python3 bench/profile_ncu.py --bundles .device/bundles \
      ${PROFILE_FP8:+--fp8-bundles .device/bundles_fp8} > "$OUT/profile.txt" 2>&1 || rc=1
    grep -E "profiling:|==PROF==|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Executed Ipc A|Issue Slots Busy|Shared Memory|No Eligible|Warp Cycles Per Issued|gmma|lts__t_bytes" \
      "$OUT/profile.txt" | head -120 ;;
  profile-fp8out)
    # The bf16 GEMM against the same GEMM with the e4m3 output epilogue
    # (bench_fp8_out.py's catalog in .device/fp8out_catalog): stall reasons
    # and the instruction mix of each, one launch each.
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section SchedulerStats --section InstructionStats --section LaunchStats \
      --print-details all \
      python3 bench/profile_ncu.py --fp8out-catalog .device/fp8out_catalog \
      > "$OUT/profile-fp8out.txt" 2>&1 || rc=1
    grep -E "profiling:|Duration|Stall|Issue Slots|Registers Per|Block Size|Grid Size|DRAM Throughput|L2 Cache Throughput|Compute \(SM\)" \
      "$OUT/profile-fp8out.txt" | head -150 ;;
  profile-fp8)
    # The FP8 kernel and its cuBLAS peer only, with every section's
    # details (stall reasons, instruction mix) and the kernel's SASS;
    # PROFILE_FP8_SHAPE="G,rows,N,K" picks the grouped shape (8,4096,4096,7168).
    # The SASS of the kernel's last variant (the large-row tile).
    IFS=, read -r _ _ pn pk <<< "${PROFILE_FP8_SHAPE:-8,4096,4096,7168}"
    cubin=$(ls .device/bundles_fp8/fp8_seg_n${pn}_k${pk}_v[0-9]*_kernel.cubin \
      .device/bundles_fp8/fp8_seg_n${pn}_k${pk}_kernel.cubin 2>/dev/null | sort -V | tail -1)
    cuobjdump -sass "$cubin" > "$OUT/$(basename "$cubin" .cubin).sass" 2>&1
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section SchedulerStats --section InstructionStats --print-details all \
      python3 bench/profile_ncu.py --fp8-bundles .device/bundles_fp8 \
      ${PROFILE_FP8_SHAPE:+--fp8-shape "$PROFILE_FP8_SHAPE"} \
      > "$OUT/profile-fp8.txt" 2>&1 || rc=1
    grep -E "profiling:|Duration|Stall|Issue Slots|Tensor|L2 Cache Throughput|SM Frequency|DRAM Throughput" \
      "$OUT/profile-fp8.txt" | head -80
    # Warp-stall samples per SASS instruction of the GGEMM kernel (the
    # source page as CSV, compressed).
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SourceCounters -k regex:fp8_seg -o "$OUT/fp8-source" \
      python3 bench/profile_ncu.py --fp8-bundles .device/bundles_fp8 \
      ${PROFILE_FP8_SHAPE:+--fp8-shape "$PROFILE_FP8_SHAPE"} > /dev/null 2>&1 &&
      ncu --import "$OUT/fp8-source.ncu-rep" --page source --csv \
        --print-source sass 2> /dev/null | xz -9 > "$OUT/fp8-source.csv.xz" || rc=1
    rm -f "$OUT/fp8-source.ncu-rep" ;;
  profile-swizzle)
    # NOTES v20: the 128x256 kernel plain and swizzled (swizzle = 8): DRAM
    # and L2 traffic on the shapes where the bands lost and won
    # (bench/profile_ncu.py --swizzle; SW_BUNDLES, default .device/bundles).
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg \
      python3 bench/profile_ncu.py --bundles "${SW_BUNDLES:-.device/bundles}" --swizzle \
      > "$OUT/profile-swizzle.txt" 2>&1 || rc=1
    grep -E "profiling:|Duration|dram__bytes_read|sector_hit_rate|srcunit_tex_op_read|pipe_tensor|Memory Throughput|DRAM Throughput|L2 Hit Rate" \
      "$OUT/profile-swizzle.txt" | head -80 ;;
  profile-pingpong)
    # NOTES v19: the ping-pong kernel against the cooperative one
    # (bench/profile_ncu.py's bf16 shapes; PP_BUNDLES, default
    # .device/bundles): stall reasons with details, and the ping-pong
    # kernel's warp-stall samples per SASS instruction (CSV, compressed).
    pp=${PP_BUNDLES:-.device/bundles}
    ncu --clock-control none --profile-from-start off --target-processes all \
      -k regex:"bench_seg_m(64n256_pingpong|128n256)_along_m_kernel" \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
      --section InstructionStats --print-details all \
      python3 bench/profile_ncu.py --bundles "$pp" \
      > "$OUT/profile-pingpong.txt" 2>&1 || rc=1
    grep -E "profiling:|Duration|Stall|Issue Slots|Compute \(SM\)" \
      "$OUT/profile-pingpong.txt" | head -80
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SourceCounters -k regex:pingpong -o "$OUT/pingpong-source" \
      python3 bench/profile_ncu.py --bundles "$pp" > /dev/null 2>&1 &&
      ncu --import "$OUT/pingpong-source.ncu-rep" --page source --csv \
        --print-source sass 2> /dev/null | xz -9 > "$OUT/pingpong-source.csv.xz" || rc=1
    rm -f "$OUT/pingpong-source.ncu-rep" ;;
  fp8-decode)
    # FP8 decode tiles: .device/bundles_fp8's dense kernels against the
    # explicit-config ones of .device/bundles_fp8_decode
    # (bench/gen_fp8_decode_kernels.py, built by build_bundles.sh), or of
    # FP8_DECODE_EXPERIMENTS=DIR (e.g. bench/kloop_pairs_experiment.py's).
    GGEMM_COMMIT=$(cat .device/bundles_fp8/COMMIT 2>/dev/null || echo "$commit") \
    python3 bench/bench_fp8_decode.py --bundles .device/bundles_fp8 \
      --experiments "${FP8_DECODE_EXPERIMENTS:-.device/bundles_fp8_decode}" \
      ${FP8_DECODE_BASELINE:+--baseline "$FP8_DECODE_BASELINE"} \
      ${FP8_FLUSH:+--flush "$FP8_FLUSH"} \
      --report "$OUT/fp8-decode${FP8_FLUSH:+-$FP8_FLUSH}.md" 2>&1 | tee "$OUT/fp8-decode${FP8_FLUSH:+-$FP8_FLUSH}.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  fp8-stride)
    # FP8 decode with the weight rows 16384 against 16512 bytes apart
    # (bench/bench_fp8_stride.py; kernels of .device/bundles_fp8_decode).
    GGEMM_COMMIT=$(cat .device/bundles_fp8_decode/COMMIT 2>/dev/null || echo "$commit") \
    python3 bench/bench_fp8_stride.py --bundles .device/bundles_fp8 \
      --experiments .device/bundles_fp8_decode \
      --report "$OUT/fp8-stride.md" 2>&1 | tee "$OUT/fp8-stride.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  fp8-safety)
    # compute-sanitizer memcheck (FP8_SAFETY_TOOL: racecheck or synccheck
    # instead) over check_fp8.py's cases of the kernels in
    # FP8_SAFETY_BUNDLES (default .device/bundles_fp8; a subset keeps it
    # short: the cases of kernels not there fail with KeyError, not counted
    # as sanitizer errors; FP8_SAFETY_ONLY=TEXT: only the cases whose label
    # contains TEXT).
    GGEMM_COMMIT=$(cat "${FP8_SAFETY_BUNDLES:-.device/bundles_fp8}/COMMIT" 2>/dev/null || echo "$commit") \
    compute-sanitizer --tool "${FP8_SAFETY_TOOL:-memcheck}" --show-backtrace device \
      --report-api-errors no \
      python3 test/gpu/check_fp8.py --bundles "${FP8_SAFETY_BUNDLES:-.device/bundles_fp8}" \
      ${FP8_SAFETY_ONLY:+--only "$FP8_SAFETY_ONLY"} \
      --report "$OUT/fp8-safety${FP8_SAFETY_TOOL:+-$FP8_SAFETY_TOOL}.md" \
      > "$OUT/fp8-safety${FP8_SAFETY_TOOL:+-$FP8_SAFETY_TOOL}.log" 2>&1
    log="$OUT/fp8-safety${FP8_SAFETY_TOOL:+-$FP8_SAFETY_TOOL}.log"
    echo "compute-sanitizer ${FP8_SAFETY_TOOL:-memcheck}: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" \
      | tee -a "$OUT/fp8-safety${FP8_SAFETY_TOOL:+-$FP8_SAFETY_TOOL}.md"
    grep -E "gpu-check-fp8" "$log" | tail -1
    # Clean only if the check ran to its summary and the tool saw nothing.
    { grep -q "^gpu-check-fp8: " "$log" &&
      grep -Eq "(ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)" "$log"; } || rc=1 ;;
  clocks)
    # SM clock, power and throttle reasons while GGEMM and its peer each run
    # back to back (bench/probe_clocks.py): bf16 on the throughput shapes,
    # FP8 on check_fp8's large ones (FP8_BUNDLES: another bundle directory).
    # CLOCKS_ONLY filters shape labels.
    python3 bench/probe_clocks.py --bundles .device/bundles \
      --fp8-bundles "${FP8_BUNDLES:-.device/bundles_fp8}" ${CLOCKS_ONLY:+--only "$CLOCKS_ONLY"} \
      --report "$OUT/clocks.md" 2>&1 | tee "$OUT/clocks.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1 ;;
  profile-fp8-decode)
    # Dense FP8 at M = 128 and its cuBLAS peer: where the weight stream
    # stalls (DRAM and L2 throughput, the A tile's L2 reads, warp states).
    ncu --clock-control none --profile-from-start off --target-processes all \
      --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section MemoryWorkloadAnalysis_Tables --section WarpStateStats \
      --section LaunchStats --section Occupancy --print-details all \
      python3 bench/profile_ncu.py --fp8-bundles .device/bundles_fp8 \
      --fp8-decode > "$OUT/profile-fp8-decode.txt" 2>&1 || rc=1
    grep -E "profiling:|Duration|Throughput|Stall|Hit Rate|Grid Size" \
      "$OUT/profile-fp8-decode.txt" | head -60 ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
exit $rc
