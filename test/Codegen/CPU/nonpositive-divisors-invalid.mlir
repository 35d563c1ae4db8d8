// An affine map must divide by a positive constant: the parser accepts
// `floordiv 0`, `ceildiv -2` and `mod -3`, but such an expression does not
// flatten (getFlattenedAffineExpr fails). dl-affine-interchange and
// dl-affine-vectorize once indexed the empty flattened form and aborted;
// upstream's lowering refuses it only after a partial rewrite, with a second,
// confusing verifier error. Every dl-affine pass, alone or in the pipeline,
// refuses it with one error at the op (dl::normalizeAffineLoops).
//
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},func.func(dl-affine-interchange))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},func.func(dl-affine-tile))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-parallelize{min-work=1}))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},func.func(dl-affine-register-tile))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-transpose-squares))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-promote-accumulators))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-collapse))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},func.func(dl-affine-vectorize))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-cpu-pipeline{target-cpu=znver3})' -verify-diagnostics

// The nest that aborted dl-affine-interchange (found while reading its cost
// model): a store whose row index divides by 0.
func.func @floordiv_zero(%out: memref<1x7x7x192xf32>, %v: vector<16xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %r = 0 to 6 {
      affine.for %c = 0 to 12 {
        %old = affine.vector_load %out[0, (%i * 6 + %r) floordiv 7, (%i * 6 + %r) mod 7, %c * 16] : memref<1x7x7x192xf32>, vector<16xf32>
        %new = arith.addf %old, %v : vector<16xf32>
        // expected-error @below {{has `(d0 * 6 + d1) floordiv 0`; a floordiv, ceildiv or mod must be by a positive constant}}
        affine.vector_store %new, %out[0, (%i * 6 + %r) floordiv 0, (%i * 6 + %r) mod 7, %c * 16] : memref<1x7x7x192xf32>, vector<16xf32>
      }
    }
  }
  return
}

// -----

func.func @ceildiv_negative(%in: memref<32x64xf32>, %out: memref<64x64xf32>) {
  affine.for %j = 0 to 64 {
    affine.for %i = 0 to 32 {
      %x = affine.load %in[%i, %j] : memref<32x64xf32>
      // expected-error @below {{'affine.store' map affine_map<(d0, d1) -> (d0, d1 ceildiv -2)> has `d1 ceildiv -2`; a floordiv, ceildiv or mod must be by a positive constant}}
      affine.store %x, %out[%i, %j ceildiv -2] : memref<64x64xf32>
    }
  }
  return
}

// -----

// In a loop bound: the loop is refused as well.
func.func @mod_negative_in_bound(%in: memref<32x64xf32>, %out: memref<32x64xf32>) {
  affine.for %j = 0 to 64 {
    // expected-error @below {{'affine.for' upperBoundMap affine_map<(d0) -> (d0 mod -3 + 32)> has `d0 mod -3`; a floordiv, ceildiv or mod must be by a positive constant}}
    affine.for %i = 0 to affine_map<(d0) -> (d0 mod -3 + 32)>(%j) {
      %x = affine.load %in[%i, %j] : memref<32x64xf32>
      affine.store %x, %out[%i, %j] : memref<32x64xf32>
    }
  }
  return
}
