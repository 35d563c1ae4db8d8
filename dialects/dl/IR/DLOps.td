//===- DLOps.td - dl dialect operations ----------------------*- tablegen -*-===//
//
// Every op but dl.cast infers its result type (InferTypeOpAdaptor); the
// inference checks the operands and attributes and reports what is wrong. A
// result type written in the IR that differs from the inferred one is rejected
// by the verifier.
//
//===----------------------------------------------------------------------===//

#ifndef DL_OPS_TD
#define DL_OPS_TD

include "dl/IR/DLAttrs.td"
include "dl/IR/DLBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class DL_InferredOp<string mnemonic, list<Trait> traits = []>
    : DL_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)>;

//===----------------------------------------------------------------------===//
// Constants and casts
//===----------------------------------------------------------------------===//

def DL_ConstantOp : DL_InferredOp<"constant", [ConstantLike]> {
  let summary = "A tensor constant";
  let description = [{
    Materializes a tensor from an elements attribute (dense or resource).
    The result type is the attribute's type, which must be statically shaped.

    ```mlir
    %c = dl.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def DL_CastOp : DL_Op<"cast", [Pure]> {
  let summary = "Converts the elements to another element type";
  let description = [{
    Like numpy's `astype`: floats are rounded to nearest (narrowing) or
    extended; integers are sign-extended or truncated (wrapping); floats become
    integers by truncation towards zero (out-of-range values are undefined, as
    in C); any value becomes bool by comparison with zero; bool becomes 0 or 1.
    The shapes of operand and result are the same.

    ```mlir
    %i = dl.cast %x : tensor<?x4xf32> -> tensor<?x4xi32>
    ```
  }];
  let arguments = (ins DL_Tensor:$input);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops with numpy broadcasting
//===----------------------------------------------------------------------===//

class DL_BroadcastBinaryOp<string mnemonic, string what,
                           Type operandType = DL_NumericTensor,
                           Type resultType = operandType>
    : DL_InferredOp<mnemonic> {
  let summary = "Elementwise " # what # " with numpy broadcasting";
  let description = [{
    Applies the operation elementwise. The operands have the same element type;
    their shapes broadcast like numpy: dimensions are aligned from the right, and
    each aligned pair must be equal or contain a 1. A dynamic dimension
    broadcasts with a dynamic dimension (equal at run time) or with 1.

    ```mlir
    %r = dl.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def DL_AddOp : DL_BroadcastBinaryOp<"add", "addition">;
def DL_SubOp : DL_BroadcastBinaryOp<"sub", "subtraction">;
def DL_MulOp : DL_BroadcastBinaryOp<"mul", "multiplication">;
def DL_DivOp : DL_BroadcastBinaryOp<"div", "division"> {
  let description = [{
    Elementwise division with numpy broadcasting (see `dl.add`). On integer
    element types the quotient is rounded towards zero.
  }];
}
def DL_PowOp : DL_BroadcastBinaryOp<"pow", "power"> {
  let description = [{
    `lhs ** rhs` elementwise with numpy broadcasting (see `dl.add`). Integer
    powers with a negative exponent give 0 (except for bases 1 and -1).
  }];
}
def DL_MaximumOp : DL_BroadcastBinaryOp<"maximum", "maximum"> {
  let description = [{
    `numpy.maximum` with broadcasting (see `dl.add`): NaN propagates.
  }];
}
def DL_MinimumOp : DL_BroadcastBinaryOp<"minimum", "minimum"> {
  let description = [{
    `numpy.minimum` with broadcasting (see `dl.add`): NaN propagates.
  }];
}

class DL_CompareOp<string mnemonic, string what>
    : DL_BroadcastBinaryOp<mnemonic, "comparison `" # what # "`", DL_Tensor,
                           DL_BoolTensor>;

def DL_EqualOp : DL_CompareOp<"equal", "==">;
def DL_NotEqualOp : DL_CompareOp<"not_equal", "!=">;
def DL_LessOp : DL_CompareOp<"less", "<">;
def DL_LessEqualOp : DL_CompareOp<"less_equal", "<=">;
def DL_GreaterOp : DL_CompareOp<"greater", ">">;
def DL_GreaterEqualOp : DL_CompareOp<"greater_equal", ">=">;

def DL_WhereOp : DL_InferredOp<"where"> {
  let summary = "Elementwise selection with numpy broadcasting";
  let description = [{
    `numpy.where(condition, lhs, rhs)`: the three shapes broadcast together;
    `lhs` and `rhs` have the same element type.

    ```mlir
    %r = dl.where %c, %a, %b : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins DL_BoolTensor:$condition, DL_Tensor:$lhs, DL_Tensor:$rhs);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class DL_UnaryOp<string mnemonic, Type operandType, string summaryText>
    : DL_InferredOp<mnemonic> {
  let summary = summaryText;
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def DL_ReluOp : DL_UnaryOp<"relu", DL_NumericTensor,
                           "Rectified linear unit: max(x, 0)">;
def DL_Relu6Op : DL_UnaryOp<"relu6", DL_NumericTensor, "min(max(x, 0), 6)">;
def DL_AbsOp : DL_UnaryOp<"abs", DL_NumericTensor, "Absolute value">;
def DL_NegOp : DL_UnaryOp<"neg", DL_NumericTensor, "Negation">;
def DL_ExpOp : DL_UnaryOp<"exp", DL_FloatTensor, "Exponential">;
def DL_LogOp : DL_UnaryOp<"log", DL_FloatTensor, "Natural logarithm">;
def DL_SqrtOp : DL_UnaryOp<"sqrt", DL_FloatTensor, "Square root">;
def DL_RsqrtOp : DL_UnaryOp<"rsqrt", DL_FloatTensor, "1 / sqrt(x)">;
def DL_ErfOp : DL_UnaryOp<"erf", DL_FloatTensor, "Gauss error function">;
def DL_TanhOp : DL_UnaryOp<"tanh", DL_FloatTensor, "Hyperbolic tangent">;
def DL_SigmoidOp : DL_UnaryOp<"sigmoid", DL_FloatTensor,
                              "Logistic sigmoid 1 / (1 + exp(-x))">;
def DL_SiluOp : DL_UnaryOp<"silu", DL_FloatTensor, "x * sigmoid(x) (swish)">;
def DL_HardswishOp : DL_UnaryOp<"hardswish", DL_FloatTensor,
                                "x * relu6(x + 3) / 6">;

def DL_LeakyReluOp : DL_InferredOp<"leaky_relu"> {
  let summary = "x if x >= 0 else alpha * x";
  let arguments = (ins DL_FloatTensor:$input, F64Attr:$alpha);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input `alpha` `=` $alpha attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def DL_GeluOp : DL_InferredOp<"gelu"> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * (1 + erf(x / sqrt(2))) / 2`; with `approximate_tanh`, the tanh form
    `x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2`.
  }];
  let arguments = (ins DL_FloatTensor:$input, UnitAttr:$approximate_tanh);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`approximate_tanh` $approximate_tanh^)? attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// More elementwise ops: trigonometry, rounding, sign, float classes, logical
// and bitwise ops, remainders
//===----------------------------------------------------------------------===//

def DL_SinOp : DL_UnaryOp<"sin", DL_FloatTensor, "Sine">;
def DL_CosOp : DL_UnaryOp<"cos", DL_FloatTensor, "Cosine">;
def DL_TanOp : DL_UnaryOp<"tan", DL_FloatTensor, "Tangent">;
def DL_AsinOp : DL_UnaryOp<"asin", DL_FloatTensor, "Inverse sine (numpy.arcsin)">;
def DL_AcosOp : DL_UnaryOp<"acos", DL_FloatTensor,
                           "Inverse cosine (numpy.arccos)">;
def DL_AtanOp : DL_UnaryOp<"atan", DL_FloatTensor,
                           "Inverse tangent (numpy.arctan)">;
def DL_SinhOp : DL_UnaryOp<"sinh", DL_FloatTensor, "Hyperbolic sine">;
def DL_CoshOp : DL_UnaryOp<"cosh", DL_FloatTensor, "Hyperbolic cosine">;
def DL_AsinhOp : DL_UnaryOp<"asinh", DL_FloatTensor,
                            "Inverse hyperbolic sine (numpy.arcsinh)">;
def DL_AcoshOp : DL_UnaryOp<"acosh", DL_FloatTensor,
                            "Inverse hyperbolic cosine (numpy.arccosh)">;
def DL_AtanhOp : DL_UnaryOp<"atanh", DL_FloatTensor,
                            "Inverse hyperbolic tangent (numpy.arctanh)">;
def DL_FloorOp : DL_UnaryOp<"floor", DL_FloatTensor,
                            "Largest integer value not greater than x">;
def DL_CeilOp : DL_UnaryOp<"ceil", DL_FloatTensor,
                           "Smallest integer value not less than x">;
def DL_RoundOp : DL_UnaryOp<"round", DL_FloatTensor,
                            "Rounds to the nearest integer value, ties to even"> {
  let description = [{
    Like `numpy.round(x)` (0 decimals) and ONNX `Round`: halfway cases go to
    the even neighbour, so 0.5 -> 0, 1.5 -> 2, -2.5 -> -2.
  }];
}
def DL_SignOp : DL_UnaryOp<"sign", DL_NumericTensor, "-1, 0 or 1 by sign"> {
  let description = [{
    `numpy.sign`: -1 for negative, 1 for positive, 0 for zero; NaN stays NaN.
  }];
}

class DL_FloatClassOp<string mnemonic, string what> : DL_InferredOp<mnemonic> {
  let summary = "Whether each element is " # what # " (bool result)";
  let arguments = (ins DL_FloatTensor:$input);
  let results = (outs DL_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def DL_IsNanOp : DL_FloatClassOp<"isnan", "NaN">;
def DL_IsInfOp : DL_FloatClassOp<"isinf", "positive or negative infinity">;

def DL_LogicalNotOp : DL_UnaryOp<"logical_not", DL_BoolTensor,
                                 "Logical negation of bools">;
def DL_BitwiseNotOp : DL_UnaryOp<"bitwise_not", DL_IntegerTensor,
                                 "Bitwise complement (numpy.invert)"> {
  let description = [{
    `~x` on the two's-complement bits of integers; on bools, logical negation
    (like `numpy.invert`).
  }];
}

def DL_LogicalAndOp : DL_BroadcastBinaryOp<"logical_and", "logical and",
                                           DL_BoolTensor>;
def DL_LogicalOrOp : DL_BroadcastBinaryOp<"logical_or", "logical or",
                                          DL_BoolTensor>;
def DL_LogicalXorOp : DL_BroadcastBinaryOp<"logical_xor", "logical xor",
                                           DL_BoolTensor>;
def DL_BitwiseAndOp : DL_BroadcastBinaryOp<"bitwise_and", "bitwise and",
                                           DL_IntegerTensor> {
  let hasCanonicalizer = 1;
}
def DL_BitwiseOrOp : DL_BroadcastBinaryOp<"bitwise_or", "bitwise or",
                                          DL_IntegerTensor> {
  let hasCanonicalizer = 1;
}
def DL_BitwiseXorOp : DL_BroadcastBinaryOp<"bitwise_xor", "bitwise xor",
                                           DL_IntegerTensor> {
  let hasCanonicalizer = 1;
}

def DL_RemainderOp : DL_BroadcastBinaryOp<"remainder", "remainder"> {
  let description = [{
    `numpy.remainder` (Python's `%`) with broadcasting (see `dl.add`): the
    result has the sign of `rhs`, `lhs - floor(lhs / rhs) * rhs`. On integers
    `x % 0` is 0 (no trap); on floats it is NaN.
  }];
}
def DL_FmodOp : DL_BroadcastBinaryOp<"fmod", "C remainder"> {
  let description = [{
    `numpy.fmod` (C's `fmod`) with broadcasting (see `dl.add`): the result has
    the sign of `lhs`, `lhs - trunc(lhs / rhs) * rhs`. On integers `x fmod 0`
    is 0 (no trap); on floats it is NaN.
  }];
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling
//===----------------------------------------------------------------------===//

def DL_MatmulOp : DL_InferredOp<"matmul"> {
  let summary = "Matrix product with numpy batch broadcasting";
  let description = [{
    Like `numpy.matmul` on operands of rank 2 or more: `lhs` is `[..., M, K]`,
    `rhs` is `[..., K, N]`, the result is `[..., M, N]`, and the leading batch
    dimensions broadcast like numpy. f16/bf16 products accumulate in f32.

    ```mlir
    %r = dl.matmul %a, %b : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins DL_NumericTensor:$lhs, DL_NumericTensor:$rhs);
  let results = (outs DL_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasCanonicalizer = 1;  let hasFolder = 1;
}

def DL_MatmulIntegerOp : DL_InferredOp<"matmul_integer"> {
  let summary = "Matrix product of 8-bit integers accumulated in i32";
  let description = [{
    `dl.matmul`'s shapes and batch broadcasting on 8-bit integer operands
    (i8 or ui8, the two may differ): each product of the sign- or
    zero-extended elements is summed in i32 (exact for K < 2^17; it wraps
    beyond). The integer products of quantized inference (ONNX
    `MatMulInteger`, `QLinearMatMul`): zero points are subtracted by the ops
    around it.

    ```mlir
    %r = dl.matmul_integer %a, %w : (tensor<?x768xui8>, tensor<768x3072xi8>) -> tensor<?x3072xi32>
    ```
  }];
  let arguments = (ins DL_IntegerTensor:$lhs, DL_IntegerTensor:$rhs);
  let results = (outs DL_IntegerTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def DL_Conv2dOp : DL_InferredOp<"conv2d"> {
  let summary = "2-D convolution (cross-correlation) with groups";
  let description = [{
    With `layout = "NCHW"` the input is `[N, C, H, W]` and the filter
    `[F, C / groups, KH, KW]` (PyTorch); with `"NHWC"` the input is
    `[N, H, W, C]` and the filter `[KH, KW, C / groups, F]` (TensorFlow).
    `padding` is `[top, bottom, left, right]` zeros; `strides` and `dilations`
    are `[h, w]`. `groups` divides C and F; groups = C is a depthwise
    convolution. The optional `bias` is `[F]`. The output has
    `OH = (H + top + bottom - dh * (KH - 1) - 1) / sh + 1` rows (and likewise
    columns).

    ```mlir
    %y = dl.conv2d %x, %w, %b strides = [1, 1] padding = [1, 1, 1, 1]
           dilations = [1, 1] groups = 1 layout = "NCHW"
           : (tensor<?x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>)
           -> tensor<?x64x56x56xf32>
    ```
  }];
  let arguments = (ins DL_FloatTensor:$input, DL_FloatTensor:$filter,
                       Optional<DL_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups,
                       StrAttr:$layout);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? `strides` `=` $strides `padding` `=`
    $padding `dilations` `=` $dilations `groups` `=` $groups `layout` `=`
    $layout attr-dict `:` functional-type(operands, results)
  }];
}

class DL_Pool2dOp<string mnemonic, string what> : DL_InferredOp<mnemonic> {
  let summary = "2-D " # what # " pooling";
  let arguments = (ins DL_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       StrAttr:$layout);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `strides` `=` $strides `padding` `=` $padding
    `layout` `=` $layout attr-dict `:` type($input) `->` type($result)
  }];
}

def DL_MaxPool2dOp : DL_Pool2dOp<"max_pool2d", "max"> {
  let description = [{
    Maximum over `kernel = [kh, kw]` windows moved by `strides`; `padding` is
    `[top, bottom, left, right]` and never wins (it is -inf). `layout` is
    `"NCHW"` or `"NHWC"`; the output size follows `dl.conv2d`'s formula.
  }];
}

def DL_AvgPool2dOp : DL_InferredOp<"avg_pool2d"> {
  let summary = "2-D average pooling";
  let description = [{
    Mean over `kernel = [kh, kw]` windows moved by `strides`; `padding` is
    `[top, bottom, left, right]` zeros. With `count_include_pad` the divisor is
    always `kh * kw`; without it, the number of input (non-padding) elements in
    the window, as in PyTorch's `count_include_pad=False`.
  }];
  let arguments = (ins DL_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       UnitAttr:$count_include_pad, StrAttr:$layout);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `strides` `=` $strides `padding` `=` $padding
    (`count_include_pad` $count_include_pad^)? `layout` `=` $layout attr-dict
    `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def DL_BatchNormOp : DL_InferredOp<"batch_norm"> {
  let summary = "Batch normalization, inference form";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * gamma + beta`, where `mean`, `var`,
    `gamma` and `beta` are `[C]` and C is the size of dimension `axis` of `x`
    (1 for NCHW, the last for NHWC).
  }];
  let arguments = (ins DL_FloatTensor:$input, DL_FloatTensor:$mean,
                       DL_FloatTensor:$variance, DL_FloatTensor:$gamma,
                       DL_FloatTensor:$beta, F64Attr:$epsilon, I64Attr:$axis);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $mean `,` $variance `,` $gamma `,` $beta `epsilon` `=` $epsilon
    `axis` `=` $axis attr-dict `:` functional-type(operands, results)
  }];
}

def DL_LayerNormOp : DL_InferredOp<"layer_norm"> {
  let summary = "Layer normalization over the trailing dimensions";
  let description = [{
    Normalizes over dimensions `axis` .. rank-1 (PyTorch's
    `normalized_shape`): `(x - mean) / sqrt(var + epsilon) * gamma + beta`, the
    mean and (biased) variance taken over those dimensions; `gamma` and `beta`
    have their shape.
  }];
  let arguments = (ins DL_FloatTensor:$input, DL_FloatTensor:$gamma,
                       DL_FloatTensor:$beta, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `axis` `=` $axis `epsilon` `=` $epsilon
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

def DL_QuantizeOp : DL_InferredOp<"quantize"> {
  let summary = "Affine quantization of floats to integers";
  let description = [{
    `clamp(round(input / scale) + zero_point, qmin, qmax)` with the result's
    integer range, rounding half to even (ONNX `QuantizeLinear`, PyTorch's
    `quantize_per_tensor` / `quantize_per_channel`). `scale` (of the input's
    float type) and `zero_point` have the same shape: rank 0 quantizes per
    tensor, rank 1 per slice along `axis`, one entry per index of that
    dimension. The zero point's element type (i8, ui8, i16, ui16 or i32) is
    the result's. The quotient is taken in the input's type, as ONNX's
    reference does; NaN becomes qmin.

    ```mlir
    %q = dl.quantize %x, %s, %z axis = 1 : (tensor<1x8x4x4xf32>, tensor<8xf32>, tensor<8xi8>) -> tensor<1x8x4x4xi8>
    ```
  }];
  let arguments = (ins DL_FloatTensor:$input, DL_FloatTensor:$scale,
                       DL_IntegerTensor:$zero_point, I64Attr:$axis);
  let results = (outs DL_IntegerTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point `axis` `=` $axis attr-dict `:`
    functional-type(operands, results)
  }];
}

def DL_DequantizeOp : DL_InferredOp<"dequantize"> {
  let summary = "Integers back to floats: (input - zero_point) * scale";
  let description = [{
    The inverse mapping of `dl.quantize` (ONNX `DequantizeLinear`): the
    result has the scale's float type. `scale` and `zero_point` are per
    tensor (rank 0) or per slice along `axis` (rank 1), the zero point of the
    input's integer type (i8, ui8, i16, ui16 or i32). Computed in f32 (f64 for
    an f64 scale) and rounded to the scale's type, as ONNX's reference does.

    ```mlir
    %x = dl.dequantize %q, %s, %z axis = 0 : (tensor<8x16xi8>, tensor<f32>, tensor<i8>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins DL_IntegerTensor:$input, DL_FloatTensor:$scale,
                       DL_IntegerTensor:$zero_point, I64Attr:$axis);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point `axis` `=` $axis attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class DL_ReduceOp<string mnemonic, string what, Type operandType = DL_NumericTensor>
    : DL_InferredOp<mnemonic> {
  let summary = "Reduction by " # what # " over the given axes";
  let description = [{
    Reduces `input` over `axes` (non-negative, strictly increasing, each less
    than the rank). Without `keepdims` the reduced dimensions are removed; with
    it they stay as size 1, like numpy's `keepdims=True`.

    ```mlir
    %r = dl.reduce_sum %x axes = [1] keepdims : tensor<4x5xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins operandType:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs operandType:$result);
  let assemblyFormat = [{
    $input `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def DL_ReduceSumOp : DL_ReduceOp<"reduce_sum", "summation">;
def DL_ReduceMaxOp : DL_ReduceOp<"reduce_max", "maximum">;
def DL_ReduceMinOp : DL_ReduceOp<"reduce_min", "minimum">;
def DL_ReduceMeanOp : DL_ReduceOp<"reduce_mean", "arithmetic mean",
                                  DL_FloatTensor>;

class DL_ArgReduceOp<string mnemonic, string what> : DL_InferredOp<mnemonic> {
  let summary = "Index of the " # what # " along one axis";
  let description = [{
    The (first) index of the extreme value along `axis`, as i64, like numpy;
    a NaN counts as the extreme. `keepdims` keeps the axis as size 1.
  }];
  let arguments = (ins DL_NumericTensor:$input, I64Attr:$axis,
                       UnitAttr:$keepdims);
  let results = (outs DL_I64Tensor:$result);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`keepdims` $keepdims^)? attr-dict `:`
    type($input) `->` type($result)
  }];
}

def DL_ArgmaxOp : DL_ArgReduceOp<"argmax", "maximum">;
def DL_ArgminOp : DL_ArgReduceOp<"argmin", "minimum">;

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

class DL_SoftmaxLikeOp<string mnemonic, string formula>
    : DL_InferredOp<mnemonic> {
  let summary = formula # " along one axis";
  let description = [{
    Along `axis` (non-negative, less than the rank), computed in the
    numerically stable form that subtracts the maximum first.

    ```mlir
    %s = dl.softmax %x axis = 1 : tensor<?x10xf32> -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins DL_FloatTensor:$input, I64Attr:$axis);
  let results = (outs DL_FloatTensor:$result);
  let assemblyFormat = [{
    $input `axis` `=` $axis attr-dict `:` type($input) `->` type($result)
  }];
}

def DL_SoftmaxOp : DL_SoftmaxLikeOp<"softmax", "exp(x) / sum(exp(x))">;
def DL_LogSoftmaxOp : DL_SoftmaxLikeOp<"log_softmax",
                                       "x - log(sum(exp(x)))">;

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def DL_TransposeOp : DL_InferredOp<"transpose"> {
  let summary = "Permutes the dimensions";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`, like
    `numpy.transpose(x, axes=permutation)`. The dynamic dimension, if any, must
    stay in front.

    ```mlir
    %t = dl.transpose %x perm = [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins DL_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $input `perm` `=` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def DL_ReshapeOp : DL_InferredOp<"reshape"> {
  let summary = "Changes the shape, keeping the elements in row-major order";
  let description = [{
    `shape` is the new shape like numpy's `reshape`: its entries are sizes
    (non-negative) or -1.

    Without `sizes` operands at most one entry is -1, standing for the size
    that makes the element counts match. When the input has dynamic
    dimensions, the -1 (which must be there) becomes the result's one dynamic
    dimension; the static part of the input's size must then be a multiple of
    the static part of the new shape, so that the -1 is whole for every size
    the dynamic dimensions take.

    With `sizes` operands (one `index` per -1 entry, in order), every -1 is a
    dynamic dimension of that size: how a dimension of a run-time size is
    split or kept (`[?, ?, 768]` into `[?, ?, 12, 64]`). The element counts
    must match at run time, which the producer guarantees (the frontends read
    the sizes from the input's dimensions).

    ```mlir
    %r = dl.reshape %x shape = [-1, 12] : tensor<?x3x4xf32> -> tensor<?x12xf32>
    %h = dl.reshape %y shape = [-1, -1, 12, 64] sizes(%b, %s)
           : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    ```
  }];
  let arguments = (ins DL_Tensor:$input, DenseI64ArrayAttr:$shape,
                       Variadic<Index>:$sizes);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $input `shape` `=` $shape (`sizes` `(` $sizes^ `)`)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$shape), [{
      build($_builder, $_state, input, shape, ::mlir::ValueRange{});
    }]>,
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::DenseI64ArrayAttr":$shape), [{
      build($_builder, $_state, result, input, shape, ::mlir::ValueRange{});
    }]>
  ];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def DL_BroadcastToOp : DL_InferredOp<"broadcast_to"> {
  let summary = "Broadcasts to a shape, like numpy.broadcast_to";
  let description = [{
    `shape` is the result shape; the input broadcasts to it by numpy's rules.
    An entry of -1 keeps the input's dimension aligned with it (like
    `torch.Tensor.expand`), dynamic or not; with `sizes` operands (one
    `index` per -1 entry, in order) every -1 is instead a dynamic dimension of
    that size, to which an input dimension of 1 broadcasts (a dynamic input
    dimension there must have that size).

    ```mlir
    %b = dl.broadcast_to %x shape = [-1, -1] sizes(%n, %s)
           : tensor<1x?xi64> -> tensor<?x?xi64>
    ```
  }];
  let arguments = (ins DL_Tensor:$input, DenseI64ArrayAttr:$shape,
                       Variadic<Index>:$sizes);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $input `shape` `=` $shape (`sizes` `(` $sizes^ `)`)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$shape), [{
      build($_builder, $_state, input, shape, ::mlir::ValueRange{});
    }]>,
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::DenseI64ArrayAttr":$shape), [{
      build($_builder, $_state, result, input, shape, ::mlir::ValueRange{});
    }]>
  ];
  let hasFolder = 1;
}

def DL_SliceOp : DL_InferredOp<"slice"> {
  let summary = "A strided window of the input";
  let description = [{
    For each dimension `d`, the result takes `sizes[d]` elements starting at
    `starts[d]` and stepping by `strides[d]` (non-zero; negative steps walk
    backwards). Every index read must lie in the dimension: on a dynamic
    dimension, a static window is the caller's promise that the dimension is
    large enough.

    A size of -1 is a dynamic result dimension. Without `dynamic_sizes`
    operands it takes the whole (dynamic) input dimension: start 0, stride 1.
    With them (one `index` per -1 entry, in order; the stride positive), it
    takes at most that many elements, as many as the dimension holds from the
    start on (Python's slicing: `x[:, :n]` of a shorter row is the row).

    ```mlir
    %s = dl.slice %x starts = [0, 1] sizes = [-1, 3] strides = [1, 2]
           : tensor<?x8xf32> -> tensor<?x3xf32>
    %p = dl.slice %ids starts = [0, 0] sizes = [1, -1] strides = [1, 1]
           dynamic_sizes(%n) : tensor<1x512xi64> -> tensor<1x?xi64>
    ```
  }];
  let arguments = (ins DL_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides,
                       Variadic<Index>:$dynamic_sizes);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $input `starts` `=` $starts `sizes` `=` $sizes `strides` `=` $strides
    (`dynamic_sizes` `(` $dynamic_sizes^ `)`)? attr-dict `:` type($input)
    `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$starts,
                   "::llvm::ArrayRef<int64_t>":$sizes,
                   "::llvm::ArrayRef<int64_t>":$strides), [{
      build($_builder, $_state, input, starts, sizes, strides,
            ::mlir::ValueRange{});
    }]>
  ];
  let hasFolder = 1;
}

def DL_IotaOp : DL_Op<"iota", [Pure]> {
  let summary = "0, 1, ..., n - 1: numpy.arange of a run-time length";
  let description = [{
    A 1-D tensor of `n` elements counting from 0, of the result's element
    type: `arange` when its length is a dynamic dimension (a static one is a
    constant). `n` must not be negative.

    ```mlir
    %positions = dl.iota %s : tensor<?xi64>
    ```
  }];
  let arguments = (ins Index:$size);
  let results = (outs DL_NumericTensor:$result);
  let assemblyFormat = "$size attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def DL_ConcatOp : DL_InferredOp<"concat"> {
  let summary = "Joins tensors along an axis, like numpy.concatenate";
  let description = [{
    The inputs have the same rank and element type, and equal sizes except
    along `axis`.

    ```mlir
    %c = dl.concat %a, %b axis = 1 : (tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x5xf32>
    ```
  }];
  let arguments = (ins Variadic<DL_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` functional-type($inputs, results)
  }];
  let hasFolder = 1;
}

def DL_PadOp : DL_InferredOp<"pad"> {
  let summary = "Pads with a constant, like numpy.pad(mode=\"constant\")";
  let description = [{
    Adds `low[d]` elements before and `high[d]` after dimension `d` (both
    non-negative), all equal to `value` (converted to the element type).
  }];
  let arguments = (ins DL_Tensor:$input, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, F64Attr:$value);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $input `low` `=` $low `high` `=` $high `value` `=` $value attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def DL_GatherOp : DL_InferredOp<"gather"> {
  let summary = "Takes elements along an axis by index, like numpy.take";
  let description = [{
    The result is `input.shape[:axis] + indices.shape +
    input.shape[axis + 1:]`, holding `input[..., indices[j...], ...]`: an
    embedding lookup when `axis` is 0. Negative indices count from the end;
    indices out of range are clamped to the dimension (no out-of-bounds read).

    ```mlir
    %e = dl.gather %table, %ids axis = 0 : (tensor<1000x64xf32>, tensor<?x16xi64>) -> tensor<?x16x64xf32>
    ```
  }];
  let arguments = (ins DL_Tensor:$input, DL_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $indices `axis` `=` $axis attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

#endif // DL_OPS_TD
