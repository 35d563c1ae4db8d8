//===- DLBase.td - dl dialect definition and type constraints -*- tablegen -*-===//
//
// The `dl` dialect: dlc's high-level tensor dialect. Ops work on ranked tensors
// whose dimensions are static, except that the leading (batch) dimension may be
// dynamic (`?`). Binary ops broadcast like numpy.
//
//===----------------------------------------------------------------------===//

#ifndef DL_BASE_TD
#define DL_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def DL_Dialect : Dialect {
  let name = "dl";
  let cppNamespace = "::mlir::dl";
  let summary = "High-level tensor dialect of the dlc deep-learning compiler";
  let description = [{
    `dl` holds the operators a deep-learning model is written in (matmul,
    elementwise arithmetic with numpy broadcasting, activations, reductions,
    shape manipulation). Every op infers its result type from its operands and
    attributes, and every op verifies its operands with a precise message.

    Tensors are ranked. All dimensions are static, except that the leading
    dimension may be dynamic (`?`); this models a dynamic batch. Where two
    dynamic dimensions meet (broadcasting, matmul batch), they are required to
    be equal at run time; the `dlc` Python frontend checks this before a call.

    `convert-dl-to-linalg` lowers every op to `linalg`, `tensor`, `arith` and
    `math` on tensors.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  // dl.strategy and dl.target, wherever they appear, are checked.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers #dl.target and #dl.strategy (DLAttrs.cpp).
    void registerAttributes();
  }];
}

// Tensors whose element count or byte size overflows int64_t are refused by
// every dl op (DLDialect.h).
def DL_SizedTensors : NativeOpTrait<"SizedTensors"> {
  let cppNamespace = "::mlir::OpTrait::dl";
}

class DL_Op<string mnemonic, list<Trait> traits = []>
    : Op<DL_Dialect, mnemonic, !listconcat([DL_SizedTensors], traits)>;

// Element types dl computes on.
def DL_AnyElement : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64,
                                UI8, UI16, UI32, UI64]>;

class DL_TensorOf<string pred, string desc>
    : Type<CPred<pred>, desc, "::mlir::RankedTensorType">;

def DL_Tensor : DL_TensorOf<"::mlir::dl::isDLTensor($_self)",
    "ranked tensor of f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, "
    "ui32 or ui64 values">;

def DL_NumericTensor : DL_TensorOf<"::mlir::dl::isDLNumericTensor($_self)",
    "ranked tensor of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32 "
    "or ui64 values">;

def DL_FloatTensor : DL_TensorOf<"::mlir::dl::isDLFloatTensor($_self)",
    "ranked tensor of f16, bf16, f32 or f64 values">;

def DL_BoolTensor : DL_TensorOf<"::mlir::dl::isDLTensorOfIntegers($_self, {1})",
    "ranked tensor of i1 (bool) values">;

def DL_IntegerTensor : DL_TensorOf<"::mlir::dl::isDLIntegerTensor($_self)",
    "ranked tensor of i1 (bool), i8, i16, i32, i64, ui8, ui16, ui32 or ui64 "
    "values">;

def DL_I64Tensor : DL_TensorOf<"::mlir::dl::isDLTensorOfIntegers($_self, {64})",
    "ranked tensor of i64 values">;

def DL_IndexTensor : DL_TensorOf<"::mlir::dl::isDLTensorOfIntegers($_self, {32, 64})",
    "ranked tensor of i32 or i64 values">;

#endif // DL_BASE_TD
