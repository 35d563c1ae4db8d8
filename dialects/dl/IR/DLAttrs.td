//===- DLAttrs.td - attributes of the dl dialect --------*- tablegen -*-===//
//
// #dl.target (dl/Target/TargetAttr.td): the CPU code is generated for.
// #dl.strategy: the code-generation strategy chosen for an op
// (dl-select-strategies), which the lowering and the loop transformations
// obey.
//
//===----------------------------------------------------------------------===//

#ifndef DL_ATTRS_TD
#define DL_ATTRS_TD

include "dl/IR/DLBase.td"
include "dl/Target/TargetAttr.td"
include "mlir/IR/EnumAttr.td"

def DL_StrategyKind : I32EnumAttr<"StrategyKind",
    "how an op is compiled", [
      I32EnumAttrCase<"RegisterTiledGemm", 0, "register_tiled_gemm">,
      I32EnumAttrCase<"Loops", 1, "loops">,
      I32EnumAttrCase<"Im2colGemm", 2, "im2col_gemm">,
      I32EnumAttrCase<"Direct", 3, "direct">,
      I32EnumAttrCase<"VectorizedReduction", 4, "vectorized_reduction">
    ]> {
  let cppNamespace = "::mlir::dl";
  let genSpecializedAttr = 0;
}

def DL_StrategyAttr : AttrDef<DL_Dialect, "Strategy"> {
  let mnemonic = "strategy";
  let summary = "The code-generation strategy of an op, and its parameters";
  let description = [{
    Chosen for each compute-heavy op by `dl-select-strategies` from the
    target (`#dl.target`) and kept on the op as `dl.strategy`; an op that
    already carries one keeps it, so a strategy written in the IR wins.
    `convert-dl-to-linalg` passes it to the linalg op that does the work and
    `dl-linalg-to-affine-loops` to the outermost loop of its nest, where
    `dl-affine-register-tile` reads it.

    | kind | for | what it does |
    | --- | --- | --- |
    | `register_tiled_gemm` | `dl.matmul` | cache-blocked, packed, register-tiled micro-kernel |
    | `loops` | `dl.matmul` (integer, dynamic K or N) | plain loops: never register-tiled |
    | `im2col_gemm` | `dl.conv2d` | input patches gathered into a matrix, one register-tiled GEMM |
    | `direct` | `dl.conv2d` | the convolution's own loop nest (register-tiled where its nest allows: NHWC, f32) |
    | `vectorized_reduction` | reductions, softmax, norms | reduced loops innermost, vectorized where contiguous |

    Parameters (0 or absent: chosen from the target where the loop nest is
    known): `rows` x `vectors` is the micro-kernel's output tile (rows of the
    output by vector registers per row; at most 128 accumulators, four times
    the largest register file); `column_block` and
    `reduction_block` are its cache blocks (output columns per block, a
    multiple of the tile's width, and iterations of the outermost reduction
    loop per block); `layout` (`NCHW` or `NHWC`) is the layout a
    convolution or pooling runs in (`dl-layout` obeys one written in the
    IR).

    Example: `#dl.strategy<kind = register_tiled_gemm, rows = 8, vectors = 2>`.
  }];
  let parameters = (ins
    EnumParameter<DL_StrategyKind>:$kind,
    DefaultValuedParameter<"int64_t", "0", "output rows of the register tile">:$rows,
    DefaultValuedParameter<"int64_t", "0", "vector registers per tile row">:$vectors,
    DefaultValuedParameter<"int64_t", "0", "output columns per cache block">:$column_block,
    DefaultValuedParameter<"int64_t", "0", "reduction iterations per cache block">:$reduction_block,
    StringRefParameter<"data layout of a convolution or pooling", "\"\"">:$layout
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether this strategy runs the op through the register-tiled
    /// micro-kernel (every kind but `loops` and `vectorized_reduction`).
    bool isRegisterTiled() const;
  }];
}

#endif // DL_ATTRS_TD
