//===- Passes.td - Graph-level passes on `dl` --------------*- tablegen -*-===//
//
// Registration and constructors are generated from this file
// (`-gen-pass-decls`).
//
//===----------------------------------------------------------------------===//

#ifndef DL_TRANSFORMS_PASSES_TD
#define DL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DLCheckSizes : Pass<"dl-check-sizes"> {
  let summary = "Refuse IR holding a shaped type whose size overflows 64 bits";
  let description = [{
    Every dl op refuses a tensor whose element count or byte size does not
    fit in int64_t; this pass makes the same check on every op result and
    function signature of any dialect (block arguments get their types from
    one or the other), so that the pipelines
    (which run it first, after dl-resolve-target) never hand such a type to
    a pass or an upstream verifier that would overflow computing its size
    (many of them assert instead of failing). One error per offending type,
    naming where it was found.
  }];
}

def DLFoldBatchNorm : Pass<"dl-fold-batchnorm"> {
  let summary = "Fold inference batch norms into the conv2d or matmul before them";
  let description = [{
    `batch_norm(conv2d(x, w, b))` over the output channels becomes
    `conv2d(x, w * s, (b - mean) * s + beta)` with `s = gamma / sqrt(var +
    eps)`; a batch norm over the features of `x @ w (+ b)` becomes
    `x @ (w * s) + ((b - mean) * s + beta)`. The new weights are dl ops, which
    the folders turn into constants when the parameters are constants. A
    producer with other users, another axis, mixed element types or a bias
    that is not `[F]` leave the batch norm alone.
  }];
}

def DLLayout : Pass<"dl-layout", "::mlir::func::FuncOp"> {
  let summary = "Run convolutions and poolings in NHWC, converting only at the graph's edges";
  let description = [{
    Each NCHW `dl.conv2d`, `dl.max_pool2d` and `dl.avg_pool2d` runs in NHWC
    (dlc's fastest layout on CPUs) between marked `dl.transpose`
    conversions; the conversions then sink through elementwise ops (unary,
    and broadcasting binary ops, whose other operand is transposed back)
    and cancel pairwise, so that inside a network of convolutions the data
    stays in NHWC. A function where something was converted gets
    `dl.layout_conversions`, the number of activation conversions left;
    `report` emits it as a remark.

    An f32 NCHW convolution (groups = 1, static spatial sizes) whose filter
    is not a constant and is larger than `nchw-min-filter-bytes` stays in
    NCHW (a constant filter is transposed once, at compile time): its im2col GEMM
    reads the OIHW filter as it lies (packed by transposing squares in
    registers), where in NHWC each call would first rewrite the whole
    filter to HWIO (9.4 MB for 512x512x3x3: about 0.9 ms here, as long as
    the GEMM), and such layers' activations are small.

    A `#dl.strategy` with a `layout` written on an op in the IR decides
    instead: `layout = "NCHW"` keeps it, `"NHWC"` converts it.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with the conversions left">,
    Option<"nchwMinFilterBytes", "nchw-min-filter-bytes", "int64_t",
           /*default=*/"0",
           "An f32 NCHW convolution whose filter has more bytes stays NCHW "
           "(0: half of this machine's L2, the direct convolution's limit; "
           "-1: none stays)">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect"];
}

def DLWinograd : Pass<"dl-winograd"> {
  let summary = "3x3 convolutions of stride 1 by Winograd's F(2x2, 3x3)";
  let description = [{
    An NHWC `dl.conv2d` with a constant f32 3x3 filter, stride 1, no
    dilation, no groups, at least `min-tiles` 2x2 output tiles (N * ceil(OH /
    2) * ceil(OW / 2)) and `min-channels` input and output channels becomes
    Winograd's minimal filtering F(2x2, 3x3) in dl ops: the padded input's
    strided views combined by additions, rows then columns, into `V`
    (`[16, tiles, C]`), one batched product `V @ U` with `U = G g G^T`
    (`[16, C, K]`, a constant computed at compile time), and the output
    transform (over the product's blocks, then with the bias), interleaved
    back to `[N, OH, OW, K]` by one transpose: 16 multiply-adds per tile
    and channel pair where the convolution does 36. A convolution with a
    recorded strategy is left alone (`report` says why in remarks).
  }];
  let options = [
    Option<"minTiles", "min-tiles", "int64_t", /*default=*/"32",
           "Fewest 2x2 output tiles transformed (32: ResNet-50's 7x7 stage at "
           "batch 1, 16 tiles, reads 1.8x the filter's weights for 16 rows "
           "and is slower; its 14x14 stage, 49 tiles, is faster)">,
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"64",
           "Fewest input and output channels (the transforms pass over 4x "
           "the input and the output, as much as the product saves with few "
           "channels: 56x56 32 -> 32 ties, 112x112 loses 15%; 64 -> 64 "
           "gains 10-25% against the direct convolution, 96 and more "
           "gain 1.7-2.4x against im2col)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark for each 3x3 convolution: transformed, or why not">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect"];
}

def DLPackWeights : Pass<"dl-pack-weights"> {
  let summary = "Pack the constant weights of matrix-vector-like products into column panels";
  let description = [{
    `x @ W` with `W` an f32 constant `[K, N]` and at most `max-rows` rows in
    `x` (static) becomes a batched product over `W`'s column panels, packed
    at compile time as a constant `[J, K, p]` (`p` columns each, the
    target's register-tile width unless `panel` says), then transposed,
    reshaped and sliced back to `x @ W`'s shape: each panel's rows are
    contiguous for the micro-kernel, instead of `p` columns of every row of
    a wide `W`. Weights that are not dense f32 constants, dynamic or many
    rows, fewer than two panels, and matmuls with a recorded strategy are
    left alone (`report` says why in remarks). With `convolutions` (the
    default), an NHWC `dl.conv2d` with a constant filter, no groups and at
    most `conv-max-rows` output pixels becomes `im2col(x) @ W` (`dl.pad`, strided
    `dl.slice` windows, `dl.concat`; `W` the filter as `[KH*KW*C, F]`) plus
    its bias, and `W` is packed the same way; and a grouped NHWC convolution
    whose groups have half a vector of output channels (and at least two
    input channels) gets its groups merged in pairs, the constant filter
    block-diagonal: whole vectors for twice the multiply-adds.
  }];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"256",
           "Most rows of x (its dimensions but the last, multiplied) packed for "
           "(256: a model's weights stream from memory; panels read in one "
           "stream win up to ViT's 197 rows and lose at ResNet's 784)">,
    Option<"panel", "panel", "int64_t", /*default=*/"0",
           "Columns per panel (0: the target's register tile: vectors x lanes)">,
    Option<"convolutions", "convolutions", "bool", /*default=*/"true",
           "Also NHWC convolutions with a constant filter and at most "
           "conv-max-rows output pixels, as im2col @ the filter packed">,
    Option<"convMaxRows", "conv-max-rows", "int64_t", /*default=*/"512",
           "Most output pixels (N * OH * OW) of a convolution packed for (512: "
           "ResNet-50's 7x7 stage at batch 8, 392 pixels, gains 10-20%; at 784 "
           "the convolution's own blocked GEMM wins or ties)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark for each matmul: packed, or why not">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect"];
}

def DLSelectStrategies : Pass<"dl-select-strategies"> {
  let summary = "Choose and record the code-generation strategy of each dl op";
  let description = [{
    Annotates matmuls (`register_tiled_gemm` or `loops`), convolutions
    (`im2col_gemm` or `direct`) and reductions (`vectorized_reduction`) with
    their `#dl.strategy`, chosen for the target (`#dl.target`): the kind,
    the micro-kernel's register tile from the target's registers, the
    layout a convolution runs in. `convert-dl-to-linalg` follows it and
    passes it on to the loop nest that `dl-affine-register-tile` builds the
    micro-kernel in. An op that already has one keeps it, so a strategy can
    be forced in the IR.
  }];
  let options = [
    Option<"maxDirectFilterBytes", "max-direct-filter-bytes", "int64_t",
           /*default=*/"0",
           "Largest filter (bytes) for which an NHWC f32 convolution runs as a "
           "register-tiled direct convolution rather than im2col + GEMM (0: "
           "half of the target's L2; -1: never, and f16/bf16 convolutions "
           "are im2col + GEMM too)">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect"];
}

def DLExplain : Pass<"dl-explain"> {
  let summary = "Report the target and the strategy chosen for each dl op";
  let description = [{
    Emits a remark naming the target (`#dl.target`, or the host's where the
    IR has none) with the facts code generation uses, then chooses
    strategies as dl-select-strategies does (recording them) and emits one
    remark per op naming its strategy and the reason:
    `dl-opt --dl-explain model.mlir`.
  }];
  let options = [
    Option<"maxDirectFilterBytes", "max-direct-filter-bytes", "int64_t",
           /*default=*/"0", "As in dl-select-strategies">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect"];
}

#endif // DL_TRANSFORMS_PASSES_TD
