// RUN: not %dlc-opt-py %s -p dl-autodiff 2>&1 | FileCheck %s

// What dl-autodiff refuses: a marked function whose result is not a float
// scalar (a loss), with a message naming it; no traceback.
// CHECK: error: dl-autodiff: @not_a_loss must return a float scalar, but returns float32[3]
// CHECK-NOT: Traceback
func.func @not_a_loss(%a: tensor<3xf32>) -> tensor<3xf32> attributes {dl.autodiff} {
  %0 = dl.exp %a : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
