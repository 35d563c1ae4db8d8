// RUN: dl-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(dl-lower-parallel-launch)'

// A launch whose captures are not the body's parameters is refused.
llvm.func internal @body(%begin: i64, %end: i64, %x: f32) {
  llvm.return
}
// expected-error @+1 {{dl-lower-parallel-launch: the launch's operands (lb, ub, step, threads, captures...) do not match the body's parameters (begin, end, captures...) of @body}}
llvm.func @body_launch(i64, i64, i64, i64, i64) attributes {dl.parallel_launch = @body}

// -----

// A launch whose body was not converted (or is missing) is refused.
// expected-error @+1 {{dl-lower-parallel-launch: the parallel body @missing of this launch is not an llvm.func with a body}}
llvm.func @missing_launch(i64, i64, i64, i64) attributes {dl.parallel_launch = @missing}

// -----

// A launch stub may only be called.
llvm.func internal @body(%begin: i64, %end: i64) {
  llvm.return
}
llvm.func @body_launch(i64, i64, i64, i64) attributes {dl.parallel_launch = @body}
llvm.func @f() -> !llvm.ptr {
  // expected-error @+1 {{dl-lower-parallel-launch: a parallel launch stub may only be called}}
  %0 = llvm.mlir.addressof @body_launch : !llvm.ptr
  llvm.return %0 : !llvm.ptr
}
