// dl-opt runs dl-check-sizes before the passes the command line asks for, so
// IR that upstream's verifier accepts but its printer, folders or passes abort
// on gets a diagnostic whatever pass runs (found by the fuzzer: dl-explain
// alone printed this tensor.pad in a remark, and upstream's printer asserted;
// so did printing the output of any pass).
// RUN: not dl-opt %s --dl-resolve-target=cpu=znver4 --dl-explain 2>&1 | FileCheck %s
// RUN: not dl-opt %s 2>&1 | FileCheck %s
// A --pass-pipeline gets the check first in its anchor (found by the fuzzer:
// dl-unshare-fills' pad decomposition aborted on this pad).
// RUN: not dl-opt %s --pass-pipeline='builtin.module(func.func(dl-unshare-fills),cse)' 2>&1 | FileCheck %s
// RUN: echo "func.func @f() { return }" | dl-opt --pass-pipeline='builtin.module(cse)' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: dl-opt %s --dl-no-input-check --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Without the check upstream's printer aborts; like mlir-opt, dl-opt then
// prints the stack (the fuzzer reads it to tell upstream's parser from dlc).
// RUN: not --crash dl-opt %s --dl-no-input-check 2>&1 | FileCheck %s --check-prefix=CRASH

// CHECK: error: 'tensor.pad' has an invalid high padding: array<i64: -9223372036854775808>
// CHECK-NOT: Assertion
// GENERIC: "tensor.pad"
// PIPELINE: builtin.module(
// PIPELINE-NEXT: dl-check-sizes,
// PIPELINE-NEXT: cse
// CRASH: Stack dump:
func.func @pad_width_without_operand(%x: tensor<4xf32>) -> tensor<6xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1] high[-9223372036854775808] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}
