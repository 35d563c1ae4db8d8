//===- DLOps.td - dl dialect operations ----------------------*- tablegen -*-===//
//
// Every op infers its result type (InferTypeOpAdaptor); the inference checks
// the operands and attributes and reports what is wrong. A result type written
// in the IR that differs from the inferred one is rejected by the verifier.
//
//===----------------------------------------------------------------------===//

#ifndef DL_OPS_TD
#define DL_OPS_TD

include "dl/DLBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def DL_ConstantOp : DL_Op<"constant",
    [ConstantLike, Pure, InferTypeOpAdaptor]> {
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

//===----------------------------------------------------------------------===//
// Elementwise binary ops with numpy broadcasting
//===----------------------------------------------------------------------===//

class DL_BroadcastBinaryOp<string mnemonic, string what>
    : DL_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
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
  let arguments = (ins DL_NumericTensor:$lhs, DL_NumericTensor:$rhs);
  let results = (outs DL_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
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

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

class DL_UnaryOp<string mnemonic, Type operandType>
    : DL_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def DL_ReluOp : DL_UnaryOp<"relu", DL_NumericTensor> {
  let summary = "Rectified linear unit: max(x, 0)";
  let description = [{
    `max(x, 0)` elementwise. A NaN input gives NaN.
  }];
}

def DL_ExpOp : DL_UnaryOp<"exp", DL_FloatTensor> {
  let summary = "Elementwise exponential";
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def DL_MatmulOp : DL_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "Matrix product with numpy batch broadcasting";
  let description = [{
    Like `numpy.matmul` on operands of rank 2 or more: `lhs` is `[..., M, K]`,
    `rhs` is `[..., K, N]`, the result is `[..., M, N]`, and the leading batch
    dimensions broadcast like numpy.

    ```mlir
    %r = dl.matmul %a, %b : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins DL_NumericTensor:$lhs, DL_NumericTensor:$rhs);
  let results = (outs DL_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class DL_ReduceOp<string mnemonic, string what>
    : DL_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "Reduction by " # what # " over the given axes";
  let description = [{
    Reduces `input` over `axes` (non-negative, strictly increasing, each less
    than the rank). Without `keepdims` the reduced dimensions are removed; with
    it they stay as size 1, like numpy's `keepdims=True`.

    ```mlir
    %r = dl.reduce_sum %x axes = [1] keepdims : tensor<4x5xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins DL_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs DL_NumericTensor:$result);
  let assemblyFormat = [{
    $input `axes` `=` $axes (`keepdims` $keepdims^)? attr-dict `:`
    type($input) `->` type($result)
  }];
}

def DL_ReduceSumOp : DL_ReduceOp<"reduce_sum", "summation">;
def DL_ReduceMaxOp : DL_ReduceOp<"reduce_max", "maximum">;

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def DL_TransposeOp : DL_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
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
}

def DL_ReshapeOp : DL_Op<"reshape", [Pure, InferTypeOpAdaptor]> {
  let summary = "Changes the shape, keeping the elements in row-major order";
  let description = [{
    `shape` is the new shape like numpy's `reshape`: at most one entry is -1,
    standing for the size that makes the element counts match; the others are
    positive. When the input has a dynamic leading dimension, `shape` must hold
    a -1, which becomes the result's dynamic dimension and must be the first
    entry; the static part of the input's size must then be a multiple of the
    static part of the new shape, so that the -1 is whole for every batch size.

    ```mlir
    %r = dl.reshape %x shape = [-1, 12] : tensor<?x3x4xf32> -> tensor<?x12xf32>
    ```
  }];
  let arguments = (ins DL_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs DL_Tensor:$result);
  let assemblyFormat = [{
    $input `shape` `=` $shape attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Composite activations
//===----------------------------------------------------------------------===//

def DL_SoftmaxOp : DL_Op<"softmax", [Pure, InferTypeOpAdaptor]> {
  let summary = "Softmax along one axis";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis` (non-negative, less
    than the rank), computed in the numerically stable form.

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

#endif // DL_OPS_TD
