// RUN: %dlc-opt-py %s -p dl-fusion-report | FileCheck %s
// RUN: %dlc-opt-py %s --fusion-report | FileCheck %s --check-prefix=REPORT
// RUN: not %dlc-opt-py %s -p dl-no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// An elementwise chain after a matmul: add + relu fuse; the matmul is its
// own kernel (no epilogue fusion yet); the softmax reads the add through its
// reduction, so the add is not fused into it.
// CHECK-LABEL: func.func @mlp_layer
// CHECK: dl.matmul {{.*}} {dl.fusion_group = 0 : i64}
// CHECK: dl.add {{.*}} {dl.fusion_group = 1 : i64}
// CHECK: dl.relu {{.*}} {dl.fusion_group = 1 : i64}
// CHECK: dl.add {{.*}} {dl.fusion_group = 2 : i64}
// CHECK: dl.softmax {{.*}} {dl.fusion_group = 3 : i64}
// REPORT: @mlp_layer: 5 ops in 4 kernels (1 fused away)
// REPORT-NEXT: kernel 0: matmul
// REPORT-NEXT: kernel 1: add + relu
// REPORT-NEXT: kernel 2: add
// REPORT-NEXT: kernel 3: softmax
func.func @mlp_layer(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %m = dl.matmul %x, %w : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %a = dl.add %m, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %r = dl.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
  %s = dl.add %r, %r : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %p = dl.softmax %s axis = 1 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %p : tensor<?x4xf32>
}

// Not fused: a value with two users, and a producer broadcast by its
// consumer (each of its elements would be computed several times).
// REPORT: @refused: 4 ops in 4 kernels (0 fused away)
func.func @refused(%x: tensor<4x3xf32>, %y: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %e = dl.exp %y : tensor<3xf32> -> tensor<3xf32>
  %m = dl.mul %x, %e : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = dl.tanh %m : tensor<4x3xf32> -> tensor<4x3xf32>
  %n = dl.neg %m : tensor<4x3xf32> -> tensor<4x3xf32>
  return %t, %n : tensor<4x3xf32>, tensor<4x3xf32>
}

// UNKNOWN: error: unknown pass or bad pipeline element 'dl-no-such-pass'
