// Pipeline options reach the passes as values (the pipelines are built with
// the pass API, not as text), and an option value the pipeline cannot use
// is an error that says what it accepts, not an abort.
// RUN: rm -rf %t && mkdir -p %t
// RUN: gemm-opt %s '--ggemm-to-ptx=chip=sm_90a bundle-dir=%t/{x}' -o /dev/null
// RUN: ls '%t/{x}' | FileCheck %s --check-prefix=BRACES
// RUN: gemm-opt %s '--ggemm-to-ptx=chip=sm_90a variants=false bundle-dir=%t/one' -o /dev/null
// RUN: ls %t/one | FileCheck %s --check-prefix=ONE
// RUN: gemm-opt %s '--ggemm-to-ptx=chip=sm_90a variants=false dependent-launch=false bundle-dir=%t/nodep' -o /dev/null
// RUN: FileCheck %s --check-prefix=NODEP --input-file=%t/nodep/options_kernel.ptx
// RUN: FileCheck %s --check-prefix=NODEP-JSON --input-file=%t/nodep/options_kernel.json
// RUN: not gemm-opt %s '--ggemm-to-ptx=chip=sm_90a features=+ptx80}' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEATURES
// RUN: not gemm-opt %s '--ggemm-to-ptx=format=cubin' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not gemm-opt %s '--ggemm-to-cpu=grid=cluster' -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRID
// RUN: not gemm-opt %s '--ggemm-to-ptx=num-sms=0' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMS
// RUN: not gemm-opt %s '--ggemm-to-cpu=num-ctas=-1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=CTAS

// Dynamic rows: by default one bundle with a kernel per tile variant
// (ggemm-select-config's variants); variants=false gives one kernel.
// BRACES: options_kernel.json
// BRACES-NEXT: options_v0_kernel.ptx
// BRACES-NEXT: options_v1_kernel.ptx
// ONE: options_kernel.json
// ONE-NEXT: options_kernel.ptx

// dependent-launch=false: no programmatic dependent launch.
// NODEP-NOT: griddepcontrol
// NODEP-JSON: "dependent_launch": false

// FEATURES: for the --features option: expects a PTX ISA version from +ptx80 to +ptx90 (sm_90a needs PTX 8.0), got '+ptx80}'
// FORMAT: for the --format option: expects one of isa, bin; got 'cubin'
// GRID: for the --grid option: expects one of persistent, tiles; got 'cluster'
// SMS: error: ggemm-select-config: expects num-sms >= 1 and expected-rows >= 0, got num-sms = 0, expected-rows = 0
// The message stands alone: no generic-form dump of the op after it.
// SMS-NOT: see current operation
// CTAS: error: convert-ggemm-to-loops: expects num-ctas to be positive, got -1

func.func @options(%x: memref<?x128xbf16>, %w: memref<2x64x128xbf16>,
                   %indptr: memref<3xi32>, %y: memref<?x64xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x128xbf16>, memref<2x64x128xbf16>)
      segments(%indptr : memref<3xi32>) outs(%y : memref<?x64xbf16>)
  return
}
