// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4 features=-avx512f},dl-llvm-target-attributes)' | FileCheck %s
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-llvm-target-attributes)' | FileCheck %s --check-prefix=PLAIN

// The llvm dialect carries the target: the module its triple, every
// function with a body the CPU and the feature changes, so LLVM compiles
// for the CPU the IR was made for. Declarations are left alone. A CPU
// without changes gets an empty feature list all the same (else LLVM would
// take the JIT host's features).
// CHECK: module attributes {dl.target = #dl.target<{{.*}}>, llvm.target_triple = "x86_64-unknown-linux-gnu"}
// CHECK: llvm.func @external(){{$}}
// CHECK: llvm.func @body() attributes {target_cpu = "znver4", target_features = #llvm.target_features<["-avx512f"]>}
// PLAIN: llvm.func @body() attributes {target_cpu = "znver3", target_features = #llvm.target_features<[]>}
module {
  llvm.func @external()
  llvm.func @body() {
    llvm.return
  }
}
