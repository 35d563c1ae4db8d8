//===- DLFolds.cpp - dl constant folding and algebraic identities ---------===//
//
// The ODS folders of the dl ops, run by the canonicalizer (and so by the
// first passes of dl-cpu-pipeline):
//
// - Constant folding of every elementwise op (with numpy broadcasting), cast,
//   where, the reductions, transpose, reshape, broadcast_to, slice, concat and
//   pad when all tensor operands are constants. Values are computed in double
//   (floats) or int64 with wrap-around at the element width (integers), then
//   rounded to the element type; for + - * / and sqrt that is the correctly
//   rounded f32/f16/bf16 result, and for the transcendental functions it is as
//   close as the runtime's own wide-float evaluation. A splat stays a splat;
//   folds that would materialize more than kMaxFoldedElements elements are not
//   done (the op computes them at run time instead). Integer division by zero
//   and float-to-integer casts of out-of-range values are left to run time.
// - Identities that return an operand: x+0, 0+x, x-0, x*1, 1*x, x/1, x**1,
//   max(x,x), min(x,x), -(-x), abs(abs x), relu(relu x), identity transposes,
//   reshapes, broadcasts and casts; and x-x = 0, x*0 = 0 on integers only (on
//   floats they are wrong for NaN and infinities). An identity is applied only
//   when the result type equals the operand's type: x + zeros(4) with x of
//   shape [1] broadcasts, so it is not x.
// - Compositions folded in place: transpose(transpose x) is one transpose
//   (or x when the permutations cancel).
//
// Canonicalization patterns (reshape of reshape, transposed operands of a
// matmul) are in DLCanonicalize.cpp.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dl;

namespace {

/// Folds that would create more elements than this are not done.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

/// A broadcast of a constant is folded only up to this many elements, or
/// up to this many times its input.
constexpr int64_t kMaxCopiedElements = int64_t(1) << 20;
constexpr int64_t kMaxBroadcastGrowth = 4;

/// A constant tensor read out of its attribute: floats as double, integers
/// as int64 (sign-extended; bool as 0/1). A splat holds one value.
struct Values {
  RankedTensorType type;
  bool isFloat = false;
  bool splat = false;
  std::vector<double> f;
  std::vector<int64_t> i;

  int64_t size() const { return splat ? 1 : (isFloat ? f.size() : i.size()); }
  double fAt(int64_t index) const { return f[splat ? 0 : index]; }
  int64_t iAt(int64_t index) const { return i[splat ? 0 : index]; }
};

double toDouble(APFloat value) {
  bool losesInfo;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

int64_t readInt(const APInt &value) {
  return value.getBitWidth() == 1 ? int64_t(value.getZExtValue())
                                  : value.getSExtValue();
}

std::optional<Values> read(Attribute attribute) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attribute);
  if (!dense)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(dense.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Values values;
  values.type = type;
  values.isFloat = isa<FloatType>(type.getElementType());
  values.splat = dense.isSplat();
  if (!values.splat && type.getNumElements() > kMaxFoldedElements)
    return std::nullopt;
  Type element = type.getElementType();
  // Unsigned elements are read zero-extended, so that int64 comparisons,
  // divisions and remainders of the values are the unsigned ones; ui64 values
  // may not fit: not folded.
  bool isUnsigned = element.isUnsignedInteger();
  if (isUnsigned && element.getIntOrFloatBitWidth() == 64)
    return std::nullopt;
  if (values.isFloat) {
    // f32 and f64 straight from the attribute's storage (a weight tensor
    // has millions of elements: APFloat per element took seconds).
    if (values.splat)
      values.f.push_back(toDouble(dense.getSplatValue<APFloat>()));
    else if (element.isF32())
      values.f.assign(dense.value_begin<float>(), dense.value_end<float>());
    else if (element.isF64())
      values.f.assign(dense.value_begin<double>(), dense.value_end<double>());
    else
      for (APFloat value : dense.getValues<APFloat>())
        values.f.push_back(toDouble(value));
  } else {
    auto readElement = [&](const APInt &value) {
      return isUnsigned ? int64_t(value.getZExtValue()) : readInt(value);
    };
    if (values.splat)
      values.i.push_back(readElement(dense.getSplatValue<APInt>()));
    else
      for (APInt value : dense.getValues<APInt>())
        values.i.push_back(readElement(value));
  }
  return values;
}

/// Wraps `value` to a signed integer of `width` bits (bool: 0 or 1).
int64_t wrap(int64_t value, unsigned width) {
  if (width == 1)
    return value & 1;
  if (width >= 64)
    return value;
  uint64_t bits = uint64_t(value) & ((uint64_t(1) << width) - 1);
  if (bits >> (width - 1))
    bits |= ~((uint64_t(1) << width) - 1);
  return int64_t(bits);
}

/// `wrap` for an element type: unsigned ones wrap to [0, 2^width).
int64_t wrapTo(int64_t value, Type element) {
  unsigned width = element.getIntOrFloatBitWidth();
  if (!element.isUnsignedInteger() || width >= 64)
    return wrap(value, width);
  return int64_t(uint64_t(value) & ((uint64_t(1) << width) - 1));
}

APFloat toElement(double value, FloatType type) {
  APFloat result(value);
  bool losesInfo;
  result.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                 &losesInfo);
  return result;
}

APInt toElement(int64_t value, unsigned width) {
  return APInt(width, uint64_t(value), /*isSigned=*/width > 1,
               /*implicitTrunc=*/true);
}

/// Builds the attribute of `type` from results computed as doubles or int64
/// (`splat`: one value for every element).
Attribute buildAttr(RankedTensorType type, bool splat, ArrayRef<double> f,
                ArrayRef<int64_t> i) {
  Type element = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    if (splat)
      return DenseElementsAttr::get(type, toElement(f[0], floatType));
    // Rounding a double to float in C++ is IEEE round-to-nearest-even, as
    // APFloat's conversion is.
    if (floatType.isF32()) {
      std::vector<float> values(f.begin(), f.end());
      return DenseElementsAttr::get(type, ArrayRef<float>(values));
    }
    if (floatType.isF64())
      return DenseElementsAttr::get(type, f);
    SmallVector<APFloat> values;
    values.reserve(f.size());
    for (double value : f)
      values.push_back(toElement(value, floatType));
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  if (splat)
    return DenseElementsAttr::get(type, toElement(i[0], width));
  SmallVector<APInt> values;
  values.reserve(i.size());
  for (int64_t value : i)
    values.push_back(toElement(value, width));
  return DenseElementsAttr::get(type, values);
}

bool foldable(Type resultType) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  return type && type.hasStaticShape() &&
         type.getNumElements() <= kMaxFoldedElements;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The element strides of an operand of shape `operand` along the
/// dimensions of `result` under numpy broadcasting: 0 where it is repeated
/// (all 0 for a splat).
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> result,
                                      ArrayRef<int64_t> shape, bool splat) {
  SmallVector<int64_t> strides(result.size(), 0);
  if (splat)
    return strides;
  SmallVector<int64_t> operandStrides = stridesOf(shape);
  size_t rank = result.size(), offset = rank - shape.size();
  for (size_t d = offset; d < rank; ++d)
    if (shape[d - offset] != 1)
      strides[d] = operandStrides[d - offset];
  return strides;
}

/// numpy broadcasting walked over a result in row-major order: for each
/// operand, the index of the element the current result element reads
/// (`at`), advanced with the position, so no index vector is materialized.
struct BroadcastWalk {
  ArrayRef<int64_t> result;
  SmallVector<SmallVector<int64_t>> strides; // per operand, per result dim
  SmallVector<int64_t> at, position;

  explicit BroadcastWalk(ArrayRef<int64_t> result)
      : result(result), position(result.size(), 0) {}
  void add(ArrayRef<int64_t> shape, bool splat) {
    strides.push_back(broadcastStrides(result, shape, splat));
    at.push_back(0);
  }
  /// To the next element; with `dims`, to the next position of the first
  /// `dims` dimensions (a row loop that walks the last one itself).
  void advance() { advance(result.size()); }
  void advance(int64_t dims) {
    for (int64_t d = dims - 1; d >= 0; --d) {
      for (auto [k, index] : llvm::enumerate(at))
        index += strides[k][d];
      if (++position[d] < result[d])
        return;
      for (auto [k, index] : llvm::enumerate(at))
        index -= strides[k][d] * result[d];
      position[d] = 0;
    }
  }
};

/// For each element of `result` (row-major), the index of the element of an
/// operand of shape `operand` that numpy broadcasting reads (0 for a splat).
std::vector<int64_t> broadcastIndices(ArrayRef<int64_t> result,
                                      const Values &operand) {
  int64_t count = 1;
  for (int64_t d : result)
    count *= d;
  std::vector<int64_t> indices(count, 0);
  if (operand.splat)
    return indices;
  BroadcastWalk walk(result);
  walk.add(operand.type.getShape(), false);
  for (int64_t n = 0; n < count; ++n, walk.advance())
    indices[n] = walk.at[0];
  return indices;
}

bool isSplatOf(Attribute attribute, double value) {
  // f32 straight from the storage, stopping at the first other element: a
  // weight (millions of elements) is read whole as double only to find its
  // first element is not `value` (the x + 0, x * 1 folds try every one).
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(attribute);
      dense && !dense.isSplat() && dense.getElementType().isF32()) {
    auto values = dense.getValues<float>();
    return llvm::all_of(values, [&](float element) {
      return double(element) == value;
    });
  }
  auto values = read(attribute);
  if (!values)
    return false;
  if (!values->splat) {
    // A non-splat constant still counts when every element is `value`.
    for (int64_t n = 0, e = values->size(); n < e; ++n)
      if (values->isFloat ? values->fAt(n) != value
                          : values->iAt(n) != int64_t(value))
        return false;
    return true;
  }
  return values->isFloat ? values->fAt(0) == value
                         : values->iAt(0) == int64_t(value);
}

/// Returns `x` when the op's result has x's type (no broadcasting grew it).
OpFoldResult sameTypeOrNull(Value x, Type resultType) {
  return x.getType() == resultType ? OpFoldResult(x) : OpFoldResult();
}

//===----------------------------------------------------------------------===//
// Elementwise evaluation
//===----------------------------------------------------------------------===//

using FloatFn = std::function<std::optional<double>(ArrayRef<double>)>;
using IntFn = std::function<std::optional<int64_t>(ArrayRef<int64_t>)>;

/// Evaluates an elementwise op over broadcast constant operands: `floatFn` on
/// float operands, `intFn` on integer ones (either may be null: not folded).
/// `floatToInt`: float operands, integer (bool) result, as comparisons.
Attribute evaluate(RankedTensorType resultType, ArrayRef<Attribute> operands,
                   FloatFn floatFn, IntFn intFn, bool floatToInt = false) {
  if (!foldable(resultType))
    return {};
  // Every operand a constant before any is read: reading a weight as
  // double costs a pass over millions of elements, wasted when the other
  // operand is not known.
  if (!llvm::all_of(operands, [](Attribute operand) {
        return isa_and_present<DenseElementsAttr>(operand);
      }))
    return {};
  SmallVector<Values> values;
  for (Attribute operand : operands) {
    auto read_ = read(operand);
    if (!read_)
      return {};
    values.push_back(std::move(*read_));
  }
  // The operands that decide float or integer evaluation: the last one (the
  // condition of `where` is bool whatever the others are).
  bool isFloat = values.back().isFloat;
  if ((isFloat && !floatFn) || (!isFloat && !intFn))
    return {};
  bool splat = llvm::all_of(values, [](const Values &v) { return v.splat; });
  // Each operand's element walked with the result's position: no index
  // vector per operand (two for a filter times its batch norm's scale,
  // 8 bytes per element each: most of ResNet-50's dl-fold-batchnorm).
  BroadcastWalk walk(resultType.getShape());
  for (const Values &value : values)
    walk.add(value.type.getShape(), value.splat);
  int64_t count = splat ? 1 : resultType.getNumElements();
  Type element = resultType.getElementType();
  bool resultIsFloat = isa<FloatType>(element);
  std::vector<double> f;
  std::vector<int64_t> i;
  if (resultIsFloat)
    f.reserve(count);
  else
    i.reserve(count);
  SmallVector<double> fArgs(values.size());
  SmallVector<int64_t> iArgs(values.size());
  for (int64_t n = 0; n < count; ++n, walk.advance()) {
    for (auto [k, value] : llvm::enumerate(values)) {
      int64_t index = walk.at[k];
      if (value.isFloat)
        fArgs[k] = value.fAt(index);
      else
        iArgs[k] = value.iAt(index);
      // A bool condition next to float operands: pass it as 0.0 / 1.0.
      if (!value.isFloat && isFloat)
        fArgs[k] = double(value.iAt(index));
    }
    if (isFloat) {
      std::optional<double> result = floatFn(fArgs);
      if (!result)
        return {};
      if (resultIsFloat)
        f.push_back(*result);
      else
        i.push_back(wrapTo(int64_t(*result), element));
    } else {
      std::optional<int64_t> result = intFn(iArgs);
      if (!result)
        return {};
      if (resultIsFloat)
        f.push_back(double(*result));
      else
        i.push_back(wrapTo(*result, element));
    }
  }
  (void)floatToInt;
  return buildAttr(resultType, splat, f, i);
}

/// fn(x, y) over two f32 constants (numpy broadcasting) in float, straight
/// from their storage: the values `evaluate` computes in double and rounds
/// (+, -, * of two floats are correctly rounded either way), without a
/// double copy of each operand and a call through a std::function per
/// element (a convolution's filter times its batch norm's scale, 25 M
/// elements in ResNet-50). Null where it does not apply.
template <typename Fn>
Attribute evaluateF32(Type resultType, Attribute lhs, Attribute rhs, Fn fn) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  auto a = dyn_cast_if_present<DenseElementsAttr>(lhs);
  auto b = dyn_cast_if_present<DenseElementsAttr>(rhs);
  if (!type || !foldable(type) || !a || !b || !type.getElementType().isF32() ||
      !a.getElementType().isF32() || !b.getElementType().isF32() ||
      (a.isSplat() && b.isSplat()))
    return {};
  SmallVector<const float *> from;
  BroadcastWalk walk(type.getShape());
  SmallVector<float> splats(2);
  for (auto [k, dense] : llvm::enumerate(SmallVector<DenseElementsAttr>{a, b})) {
    auto operandType = dyn_cast<RankedTensorType>(dense.getType());
    if (!operandType || !operandType.hasStaticShape() ||
        operandType.getRank() > type.getRank())
      return {};
    if (dense.isSplat()) {
      splats[k] = dense.template getSplatValue<float>();
      from.push_back(&splats[k]);
    } else {
      ArrayRef<char> raw = dense.getRawData();
      if (raw.size() != size_t(operandType.getNumElements()) * sizeof(float))
        return {};
      from.push_back(reinterpret_cast<const float *>(raw.data()));
    }
    walk.add(operandType.getShape(), dense.isSplat());
  }
  // Row by row: the walk steps the outer dimensions, the row's own strides
  // the last one (the per-element step is the hot loop).
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = shape.size(), count = type.getNumElements();
  int64_t row = rank ? shape.back() : 1;
  int64_t si = rank ? walk.strides[0].back() : 0;
  int64_t sj = rank ? walk.strides[1].back() : 0;
  std::vector<float> out(count);
  for (int64_t n = 0; n < count; n += row, walk.advance(rank - 1)) {
    const float *x = from[0] + walk.at[0], *y = from[1] + walk.at[1];
    for (int64_t c = 0; c < row; ++c)
      out[n + c] = fn(x[c * si], y[c * sj]);
  }
  return DenseElementsAttr::get(type, ArrayRef<float>(out));
}

template <typename F>
FloatFn unaryF(F fn) {
  return [fn](ArrayRef<double> a) -> std::optional<double> { return fn(a[0]); };
}
template <typename F>
FloatFn binaryF(F fn) {
  return [fn](ArrayRef<double> a) -> std::optional<double> {
    return fn(a[0], a[1]);
  };
}

double nanMax(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN()
                                        : std::max(x, y);
}
double nanMin(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN()
                                        : std::min(x, y);
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

int64_t integerPower(int64_t base, int64_t exponent, unsigned width) {
  if (exponent < 0)
    return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
  uint64_t result = 1, factor = uint64_t(base);
  for (uint64_t e = uint64_t(exponent); e; e >>= 1) {
    if (e & 1)
      result = uint64_t(wrap(int64_t(result * factor), width));
    factor = uint64_t(wrap(int64_t(factor * factor), width));
  }
  return wrap(int64_t(result), width);
}

unsigned widthOf(Type tensorType) {
  Type element = cast<ShapedType>(tensorType).getElementType();
  return element.isIntOrIndex() ? element.getIntOrFloatBitWidth() : 0;
}

} // namespace

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0))
    if (OpFoldResult x = sameTypeOrNull(getLhs(), getType()))
      return x;
  if (isSplatOf(adaptor.getLhs(), 0))
    if (OpFoldResult x = sameTypeOrNull(getRhs(), getType()))
      return x;
  unsigned width = widthOf(getType());
  if (Attribute folded =
          evaluateF32(getType(), adaptor.getLhs(), adaptor.getRhs(),
                      [](float x, float y) { return x + y; }))
    return folded;
  return evaluate(getType(), adaptor.getOperands(),
                  binaryF([](double x, double y) { return x + y; }),
                  [width](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    return wrap(int64_t(uint64_t(a[0]) + uint64_t(a[1])), width);
                  });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0))
    if (OpFoldResult x = sameTypeOrNull(getLhs(), getType()))
      return x;
  unsigned width = widthOf(getType());
  auto type = cast<RankedTensorType>(getType());
  if (getLhs() == getRhs() && width && type.hasStaticShape())
    return DenseElementsAttr::get(type, toElement(int64_t(0), width));
  if (Attribute folded =
          evaluateF32(getType(), adaptor.getLhs(), adaptor.getRhs(),
                      [](float x, float y) { return x - y; }))
    return folded;
  return evaluate(getType(), adaptor.getOperands(),
                  binaryF([](double x, double y) { return x - y; }),
                  [width](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    return wrap(int64_t(uint64_t(a[0]) - uint64_t(a[1])), width);
                  });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult x = sameTypeOrNull(getLhs(), getType()))
      return x;
  if (isSplatOf(adaptor.getLhs(), 1))
    if (OpFoldResult x = sameTypeOrNull(getRhs(), getType()))
      return x;
  unsigned width = widthOf(getType());
  auto type = cast<RankedTensorType>(getType());
  if (width && type.hasStaticShape() &&
      (isSplatOf(adaptor.getLhs(), 0) || isSplatOf(adaptor.getRhs(), 0)))
    return DenseElementsAttr::get(type, toElement(int64_t(0), width));
  if (Attribute folded =
          evaluateF32(getType(), adaptor.getLhs(), adaptor.getRhs(),
                      [](float x, float y) { return x * y; }))
    return folded;
  return evaluate(getType(), adaptor.getOperands(),
                  binaryF([](double x, double y) { return x * y; }),
                  [width](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    return wrap(int64_t(uint64_t(a[0]) * uint64_t(a[1])), width);
                  });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult x = sameTypeOrNull(getLhs(), getType()))
      return x;
  unsigned width = widthOf(getType());
  return evaluate(getType(), adaptor.getOperands(),
                  binaryF([](double x, double y) { return x / y; }),
                  [width](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    if (a[1] == 0)
                      return std::nullopt; // left to run time
                    if (a[1] == -1)
                      return wrap(int64_t(0 - uint64_t(a[0])), width);
                    return a[0] / a[1];
                  });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult x = sameTypeOrNull(getLhs(), getType()))
      return x;
  unsigned width = widthOf(getType());
  return evaluate(getType(), adaptor.getOperands(),
                  binaryF([](double x, double y) { return std::pow(x, y); }),
                  [width](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    return integerPower(a[0], a[1], width);
                  });
}

OpFoldResult MaximumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return evaluate(getType(), adaptor.getOperands(), binaryF(nanMax),
                  [](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    return std::max(a[0], a[1]);
                  });
}

OpFoldResult MinimumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return evaluate(getType(), adaptor.getOperands(), binaryF(nanMin),
                  [](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    return std::min(a[0], a[1]);
                  });
}

// Comparisons: ordered on floats (false with a NaN) except !=, like numpy.
#define DL_COMPARE_FOLD(OpTy, expression)                                      \
  OpFoldResult OpTy::fold(FoldAdaptor adaptor) {                               \
    return evaluate(                                                           \
        getType(), adaptor.getOperands(),                                      \
        binaryF([](double x, double y) -> double { return (expression); }),    \
        [](ArrayRef<int64_t> a) -> std::optional<int64_t> {                    \
          int64_t x = a[0], y = a[1];                                          \
          return (expression);                                                 \
        },                                                                     \
        /*floatToInt=*/true);                                                  \
  }
DL_COMPARE_FOLD(EqualOp, x == y)
DL_COMPARE_FOLD(NotEqualOp, x != y)
DL_COMPARE_FOLD(LessOp, x < y)
DL_COMPARE_FOLD(LessEqualOp, x <= y)
DL_COMPARE_FOLD(GreaterOp, x > y)
DL_COMPARE_FOLD(GreaterEqualOp, x >= y)
#undef DL_COMPARE_FOLD

// Logical and bitwise ops: bools are 0 or 1, so & | ^ are the logical ones;
// x op x is x for and/or.
#define DL_BITWISE_FOLD(OpTy, expression, idempotentOp)                        \
  OpFoldResult OpTy::fold(FoldAdaptor adaptor) {                               \
    if (idempotentOp && getLhs() == getRhs())                                  \
      if (OpFoldResult x = sameTypeOrNull(getLhs(), getType()))                \
        return x;                                                              \
    return evaluate(getType(), adaptor.getOperands(), nullptr,                 \
                    [](ArrayRef<int64_t> a) -> std::optional<int64_t> {        \
                      int64_t x = a[0], y = a[1];                              \
                      return (expression);                                     \
                    });                                                        \
  }
DL_BITWISE_FOLD(LogicalAndOp, (x != 0) && (y != 0), true)
DL_BITWISE_FOLD(LogicalOrOp, (x != 0) || (y != 0), true)
DL_BITWISE_FOLD(LogicalXorOp, (x != 0) != (y != 0), false)
DL_BITWISE_FOLD(BitwiseAndOp, x & y, true)
DL_BITWISE_FOLD(BitwiseOrOp, x | y, true)
DL_BITWISE_FOLD(BitwiseXorOp, x ^ y, false)
#undef DL_BITWISE_FOLD

namespace {

/// numpy's float remainder: fmod, moved into the divisor's sign (a zero
/// takes the divisor's sign).
double floatRemainder(double x, double y) {
  double r = std::fmod(x, y);
  if (r == 0)
    return std::copysign(0.0, y);
  if ((r < 0) != (y < 0))
    r += y;
  return r;
}

/// C's % without its traps: x % 0 = 0, and x % -1 = 0 (INT_MIN % -1 traps).
int64_t safeRemainder(int64_t x, int64_t y) {
  return y == 0 || y == -1 ? 0 : x % y;
}

} // namespace

OpFoldResult RemainderOp::fold(FoldAdaptor adaptor) {
  return evaluate(getType(), adaptor.getOperands(), binaryF(floatRemainder),
                  [](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    int64_t r = safeRemainder(a[0], a[1]);
                    return r != 0 && (r < 0) != (a[1] < 0) ? r + a[1] : r;
                  });
}

OpFoldResult FmodOp::fold(FoldAdaptor adaptor) {
  return evaluate(getType(), adaptor.getOperands(),
                  binaryF([](double x, double y) { return std::fmod(x, y); }),
                  [](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    return safeRemainder(a[0], a[1]);
                  });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    if (OpFoldResult x = sameTypeOrNull(getLhs(), getType()))
      return x;
  // A constant condition that is all true (all false) selects lhs (rhs).
  if (isSplatOf(adaptor.getCondition(), 1))
    if (OpFoldResult x = sameTypeOrNull(getLhs(), getType()))
      return x;
  if (isSplatOf(adaptor.getCondition(), 0))
    if (OpFoldResult x = sameTypeOrNull(getRhs(), getType()))
      return x;
  // (evaluate reads the operands once all three are constants)
  if (isa<FloatType>(cast<ShapedType>(getLhs().getType()).getElementType()))
    return evaluate(getType(), adaptor.getOperands(),
                    [](ArrayRef<double> a) -> std::optional<double> {
                      return a[0] != 0 ? a[1] : a[2];
                    },
                    nullptr);
  return evaluate(getType(), adaptor.getOperands(), nullptr,
                  [](ArrayRef<int64_t> a) -> std::optional<int64_t> {
                    return a[0] != 0 ? a[1] : a[2];
                  });
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

/// f(f(x)) = f(x) for the idempotent ops.
template <typename OpTy>
OpFoldResult idempotent(OpTy op) {
  if (auto inner = op.getInput().template getDefiningOp<OpTy>())
    return inner.getResult();
  return {};
}

#define DL_UNARY_FOLD(OpTy, floatExpr, intExpr, extra)                         \
  OpFoldResult OpTy::fold(FoldAdaptor adaptor) {                               \
    extra;                                                                     \
    [[maybe_unused]] unsigned width = widthOf(getType());                      \
    FloatFn floatFn = unaryF([](double x) -> double { return (floatExpr); });  \
    IntFn intFn = nullptr;                                                     \
    if constexpr (intExpr)                                                     \
      intFn = [width](ArrayRef<int64_t> a) -> std::optional<int64_t> {         \
        int64_t x = a[0];                                                      \
        if constexpr (std::is_same_v<OpTy, NegOp>)                             \
          return wrap(int64_t(0 - uint64_t(x)), width);                        \
        if constexpr (std::is_same_v<OpTy, AbsOp>)                             \
          return wrap(x < 0 ? int64_t(0 - uint64_t(x)) : x, width);            \
        if constexpr (std::is_same_v<OpTy, ReluOp>)                            \
          return std::max<int64_t>(x, 0);                                      \
        if constexpr (std::is_same_v<OpTy, SignOp>)                            \
          return int64_t(x > 0) - int64_t(x < 0);                              \
        return std::min<int64_t>(std::max<int64_t>(x, 0), 6);                  \
      };                                                                       \
    return evaluate(getType(), adaptor.getOperands(), floatFn, intFn);         \
  }

DL_UNARY_FOLD(ReluOp, nanMax(x, 0.0), true, if (auto r = idempotent(*this)) return r)
DL_UNARY_FOLD(Relu6Op, nanMin(nanMax(x, 0.0), 6.0), true, if (auto r = idempotent(*this)) return r)
DL_UNARY_FOLD(AbsOp, std::fabs(x), true, if (auto r = idempotent(*this)) return r)
DL_UNARY_FOLD(NegOp, -x, true,
              if (auto inner = getInput().getDefiningOp<NegOp>()) return inner.getInput())
DL_UNARY_FOLD(ExpOp, std::exp(x), false, )
DL_UNARY_FOLD(LogOp, std::log(x), false, )
DL_UNARY_FOLD(SqrtOp, std::sqrt(x), false, )
DL_UNARY_FOLD(RsqrtOp, 1.0 / std::sqrt(x), false, )
DL_UNARY_FOLD(ErfOp, std::erf(x), false, )
DL_UNARY_FOLD(TanhOp, std::tanh(x), false, )
DL_UNARY_FOLD(SigmoidOp, sigmoid(x), false, )
DL_UNARY_FOLD(SiluOp, x * sigmoid(x), false, )
DL_UNARY_FOLD(HardswishOp, x * nanMin(nanMax(x + 3.0, 0.0), 6.0) / 6.0, false, )
DL_UNARY_FOLD(SinOp, std::sin(x), false, )
DL_UNARY_FOLD(CosOp, std::cos(x), false, )
DL_UNARY_FOLD(TanOp, std::tan(x), false, )
DL_UNARY_FOLD(AsinOp, std::asin(x), false, )
DL_UNARY_FOLD(AcosOp, std::acos(x), false, )
DL_UNARY_FOLD(AtanOp, std::atan(x), false, )
DL_UNARY_FOLD(SinhOp, std::sinh(x), false, )
DL_UNARY_FOLD(CoshOp, std::cosh(x), false, )
DL_UNARY_FOLD(AsinhOp, std::asinh(x), false, )
DL_UNARY_FOLD(AcoshOp, std::acosh(x), false, )
DL_UNARY_FOLD(AtanhOp, std::atanh(x), false, )
DL_UNARY_FOLD(FloorOp, std::floor(x), false, if (auto r = idempotent(*this)) return r)
DL_UNARY_FOLD(CeilOp, std::ceil(x), false, if (auto r = idempotent(*this)) return r)
// The default rounding mode is to nearest, ties to even: numpy.round.
DL_UNARY_FOLD(RoundOp, std::nearbyint(x), false, if (auto r = idempotent(*this)) return r)
DL_UNARY_FOLD(SignOp, std::isnan(x) ? x : double(x > 0) - double(x < 0), true,
              if (auto r = idempotent(*this)) return r)
#undef DL_UNARY_FOLD

OpFoldResult IsNanOp::fold(FoldAdaptor adaptor) {
  return evaluate(getType(), adaptor.getOperands(),
                  unaryF([](double x) { return double(std::isnan(x)); }), nullptr,
                  /*floatToInt=*/true);
}

OpFoldResult IsInfOp::fold(FoldAdaptor adaptor) {
  return evaluate(getType(), adaptor.getOperands(),
                  unaryF([](double x) { return double(std::isinf(x)); }), nullptr,
                  /*floatToInt=*/true);
}

/// Bools are read as 0 or 1 and results wrap to the element width, so one
/// integer function serves bools and integers.
#define DL_INTEGER_UNARY_FOLD(OpTy, expression, extra)                         \
  OpFoldResult OpTy::fold(FoldAdaptor adaptor) {                               \
    extra;                                                                     \
    return evaluate(getType(), adaptor.getOperands(), nullptr,                 \
                    [](ArrayRef<int64_t> a) -> std::optional<int64_t> {        \
                      int64_t x = a[0];                                        \
                      return (expression);                                     \
                    });                                                        \
  }
DL_INTEGER_UNARY_FOLD(LogicalNotOp, x == 0,
                      if (auto inner = getInput().getDefiningOp<LogicalNotOp>())
                          return inner.getInput())
DL_INTEGER_UNARY_FOLD(BitwiseNotOp, ~x,
                      if (auto inner = getInput().getDefiningOp<BitwiseNotOp>())
                          return inner.getInput())
#undef DL_INTEGER_UNARY_FOLD

OpFoldResult LeakyReluOp::fold(FoldAdaptor adaptor) {
  double alpha = getAlpha().convertToDouble();
  return evaluate(getType(), adaptor.getOperands(),
                  unaryF([alpha](double x) { return x >= 0 ? x : alpha * x; }),
                  nullptr);
}

OpFoldResult GeluOp::fold(FoldAdaptor adaptor) {
  bool useTanh = getApproximateTanh();
  return evaluate(getType(), adaptor.getOperands(),
                  unaryF([useTanh](double x) {
                    if (useTanh)
                      return 0.5 * x *
                             (1.0 + std::tanh(std::sqrt(2.0 / M_PI) *
                                              (x + 0.044715 * x * x * x)));
                    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
                  }),
                  nullptr);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto values = read(adaptor.getInput());
  auto type = cast<RankedTensorType>(getType());
  if (!values || !foldable(type))
    return {};
  Type element = type.getElementType();
  unsigned width = widthOf(type);
  std::vector<double> f;
  std::vector<int64_t> i;
  for (int64_t n = 0, e = values->size(); n < e; ++n) {
    if (values->isFloat) {
      double x = values->fAt(n);
      if (isa<FloatType>(element)) {
        f.push_back(x);
      } else if (width == 1) {
        i.push_back(x != 0);
      } else {
        double truncated = std::trunc(x);
        // Out of range (or NaN) is undefined at run time: not folded.
        bool isUnsigned = element.isUnsignedInteger();
        double low = isUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
        double high = std::ldexp(1.0, isUnsigned ? width : width - 1);
        if (!(truncated >= low && truncated < high))
          return {};
        i.push_back(int64_t(truncated));
      }
    } else {
      int64_t x = values->iAt(n);
      if (isa<FloatType>(element))
        f.push_back(double(x));
      else
        i.push_back(width == 1 ? int64_t(x != 0) : wrapTo(x, element));
    }
  }
  return buildAttr(type, values->splat, f, i);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {

enum class Reduction { Sum, Max, Min, Mean };

Attribute reduce(Attribute operand, RankedTensorType resultType,
                 ArrayRef<int64_t> axes, Reduction kind) {
  auto values = read(operand);
  if (!values || !foldable(resultType))
    return {};
  ArrayRef<int64_t> shape = values->type.getShape();
  int64_t inputCount = values->type.getNumElements();
  if (inputCount > kMaxFoldedElements)
    return {};
  // Output index of each input element: drop (or zero) the reduced axes.
  llvm::SmallBitVector reduced(shape.size());
  int64_t reducedCount = 1;
  for (int64_t axis : axes) {
    reduced.set(axis);
    reducedCount *= shape[axis];
  }
  if (reducedCount == 0)
    return {}; // an empty max/min has no value; leave it to run time
  int64_t outputCount = inputCount / reducedCount;
  SmallVector<int64_t> outShape;
  for (auto [d, size] : llvm::enumerate(shape))
    outShape.push_back(reduced.test(d) ? 1 : size);
  SmallVector<int64_t> outStrides = stridesOf(outShape);
  for (auto [d, size] : llvm::enumerate(shape))
    if (reduced.test(d))
      outStrides[d] = 0;
  bool isFloat = values->isFloat;
  unsigned width = widthOf(resultType);
  std::vector<double> f(isFloat ? outputCount : 0);
  std::vector<int64_t> i(isFloat ? 0 : outputCount);
  std::vector<bool> seen(outputCount, false);
  SmallVector<int64_t> position(shape.size(), 0);
  int64_t out = 0;
  for (int64_t n = 0; n < inputCount; ++n) {
    if (isFloat) {
      double x = values->fAt(n);
      double &acc = f[out];
      if (!seen[out])
        acc = x;
      else if (kind == Reduction::Max)
        acc = nanMax(acc, x);
      else if (kind == Reduction::Min)
        acc = nanMin(acc, x);
      else
        acc += x;
    } else {
      int64_t x = values->iAt(n);
      int64_t &acc = i[out];
      if (!seen[out])
        acc = x;
      else if (kind == Reduction::Max)
        acc = std::max(acc, x);
      else if (kind == Reduction::Min)
        acc = std::min(acc, x);
      else
        acc = wrap(int64_t(uint64_t(acc) + uint64_t(x)), width);
    }
    seen[out] = true;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      out += outStrides[d];
      if (++position[d] < shape[d])
        break;
      out -= outStrides[d] * shape[d];
      position[d] = 0;
    }
  }
  if (kind == Reduction::Mean)
    for (double &acc : f)
      acc /= double(reducedCount);
  return buildAttr(resultType, /*splat=*/false, f, i);
}

} // namespace

OpFoldResult ReduceSumOp::fold(FoldAdaptor adaptor) {
  return reduce(adaptor.getInput(), getType(), getAxes(), Reduction::Sum);
}
OpFoldResult ReduceMaxOp::fold(FoldAdaptor adaptor) {
  return reduce(adaptor.getInput(), getType(), getAxes(), Reduction::Max);
}
OpFoldResult ReduceMinOp::fold(FoldAdaptor adaptor) {
  return reduce(adaptor.getInput(), getType(), getAxes(), Reduction::Min);
}
OpFoldResult ReduceMeanOp::fold(FoldAdaptor adaptor) {
  return reduce(adaptor.getInput(), getType(), getAxes(), Reduction::Mean);
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

namespace {

/// Gathers the constant's elements: element n of the result is element
/// `source(position)` of `values` (-1: `fill`), over the result's positions.
Attribute gatherElements(const Values &values, RankedTensorType resultType,
                         llvm::function_ref<int64_t(ArrayRef<int64_t>)> source,
                         double fill = 0) {
  if (!foldable(resultType))
    return {};
  ArrayRef<int64_t> shape = resultType.getShape();
  int64_t count = resultType.getNumElements();
  std::vector<double> f;
  std::vector<int64_t> i;
  SmallVector<int64_t> position(shape.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t from = source(position);
    if (values.isFloat)
      f.push_back(from < 0 ? fill : values.fAt(from));
    else
      i.push_back(from < 0 ? int64_t(fill) : values.iAt(from));
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (++position[d] < shape[d])
        break;
      position[d] = 0;
    }
  }
  return buildAttr(resultType, /*splat=*/false, f, i);
}

/// The transpose of a dense constant of whole-byte elements, its raw bytes
/// permuted directly: element n of the result (row-major over `type`) is
/// element sum(position[d] * strides[perm[d]]) of the input. A weight matrix
/// holds millions of elements, which `read` and gatherElements convert to
/// double and back with a callback per element (0.6 s of BERT-base's cold
/// compile for its 73 weight transposes). Null where it does not apply.
Attribute transposeRaw(DenseElementsAttr dense, RankedTensorType type,
                       ArrayRef<int64_t> perm) {
  auto inputType = dyn_cast<RankedTensorType>(dense.getType());
  Type element = type.getElementType();
  if (dense.isSplat() || !inputType || !inputType.hasStaticShape() ||
      !foldable(type) || !element.isIntOrFloat() ||
      element.getIntOrFloatBitWidth() % 8 != 0)
    return {};
  size_t width = element.getIntOrFloatBitWidth() / 8;
  int64_t count = type.getNumElements();
  ArrayRef<char> raw = dense.getRawData();
  if (count == 0 || raw.size() != width * size_t(count))
    return {};
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> inputStrides = stridesOf(inputType.getShape());
  SmallVector<int64_t> strides(rank);
  for (int64_t d = 0; d < rank; ++d)
    strides[d] = inputStrides[perm[d]];
  std::vector<char> out(raw.size());
  auto copy = [&](auto tag) {
    using T = decltype(tag);
    const T *from = reinterpret_cast<const T *>(raw.data());
    T *to = reinterpret_cast<T *>(out.data());
    int64_t inner = shape[rank - 1], step = strides[rank - 1];
    // A matrix transpose (a linear layer's weight) in 64 x 64 blocks: row
    // by row, each output row read a column, one element per cache line.
    if (rank == 2 && perm[0] == 1) {
      constexpr int64_t kBlock = 64;
      int64_t rows = shape[0];
      for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
        for (int64_t c0 = 0; c0 < inner; c0 += kBlock)
          for (int64_t r = r0; r < std::min(rows, r0 + kBlock); ++r)
            for (int64_t c = c0; c < std::min(inner, c0 + kBlock); ++c)
              to[r * inner + c] = from[c * step + r];
      return;
    }
    SmallVector<int64_t> position(rank, 0);
    int64_t base = 0;
    for (int64_t n = 0; n < count; n += inner) {
      const T *row = from + base;
      for (int64_t k = 0; k < inner; ++k)
        to[n + k] = row[k * step];
      for (int64_t d = rank - 2; d >= 0; --d) {
        base += strides[d];
        if (++position[d] < shape[d])
          break;
        base -= strides[d] * shape[d];
        position[d] = 0;
      }
    }
  };
  switch (width) {
  case 1: copy(uint8_t()); break;
  case 2: copy(uint16_t()); break;
  case 4: copy(uint32_t()); break;
  case 8: copy(uint64_t()); break;
  default: return {};
  }
  return DenseElementsAttr::getFromRawBuffer(type, out);
}

} // namespace

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  // transpose(transpose(x, p), q) = transpose(x, p o q), in place.
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t d : perm)
      composed.push_back(innerPerm[d]);
    if (llvm::equal(composed, llvm::seq<int64_t>(0, composed.size())))
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    return getResult();
  }
  auto type = cast<RankedTensorType>(getType());
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    if (Attribute folded = transposeRaw(dense, type, perm))
      return folded;
  auto values = read(adaptor.getInput());
  if (!values)
    return {};
  if (values->splat)
    return buildAttr(type, true, values->f, values->i);
  SmallVector<int64_t> inputStrides = stridesOf(values->type.getShape());
  return gatherElements(*values, type, [&](ArrayRef<int64_t> position) {
    int64_t index = 0;
    for (auto [d, p] : llvm::enumerate(position))
      index += p * inputStrides[perm[d]];
    return index;
  });
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  // The same type is the same shape unless two dimensions are dynamic (their
  // sizes could trade places: [?, ?] as [s, b] from [b, s]).
  auto inputType = cast<RankedTensorType>(getInput().getType());
  if (inputType == getType() && inputType.getNumDynamicDims() <= 1)
    return getInput();
  auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  auto type = cast<RankedTensorType>(getType());
  if (!dense || !type.hasStaticShape())
    return {};
  return dense.reshape(type);
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto values = read(adaptor.getInput());
  auto type = cast<RankedTensorType>(getType());
  if (!values || !foldable(type))
    return {};
  if (values->splat)
    return buildAttr(type, true, values->f, values->i);
  // A constant copied many times over (a weight broadcast over a batch)
  // stays a broadcast: consumers read it in place (matmul's batch
  // broadcasting, elementwise fusion) instead of a constant 8x the weight.
  int64_t from = values->type.getNumElements();
  if (type.getNumElements() > kMaxCopiedElements &&
      type.getNumElements() > kMaxBroadcastGrowth * from)
    return {};
  std::vector<int64_t> indices = broadcastIndices(type.getShape(), *values);
  int64_t n = 0;
  return gatherElements(*values, type,
                        [&](ArrayRef<int64_t>) { return indices[n++]; });
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  // A slice of run-time sizes may be shorter than its input.
  if (getInput().getType() == getType() && getDynamicSizes().empty() &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getStrides(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto values = read(adaptor.getInput());
  auto type = cast<RankedTensorType>(getType());
  if (!values || !foldable(type))
    return {};
  if (values->splat)
    return buildAttr(type, true, values->f, values->i);
  SmallVector<int64_t> inputStrides = stridesOf(values->type.getShape());
  ArrayRef<int64_t> starts = getStarts(), strides = getStrides();
  return gatherElements(*values, type, [&](ArrayRef<int64_t> position) {
    int64_t index = 0;
    for (auto [d, p] : llvm::enumerate(position))
      index += (starts[d] + p * strides[d]) * inputStrides[d];
    return index;
  });
}

/// A gather of constant indices from a constant (Swin's relative position
/// bias: a table indexed by a constant buffer; BERT's token-type rows for
/// the default all-zero types, [S, 768] from [2, 768]) is a constant, when
/// it is at most 2^20 elements or 16 times its input.
OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto values = read(adaptor.getInput());
  auto indices = read(adaptor.getIndices());
  auto type = cast<RankedTensorType>(getType());
  if (!values || !indices || !foldable(type) ||
      type.getNumElements() >
          std::max<int64_t>(16 * values->type.getNumElements(), 1 << 20))
    return {};
  ArrayRef<int64_t> inputShape = values->type.getShape();
  int64_t axis = getAxis(), rank = indices->type.getRank();
  int64_t size = inputShape[axis];
  if (size == 0)
    return {};
  SmallVector<int64_t> inputStrides = stridesOf(inputShape);
  SmallVector<int64_t> indexStrides = stridesOf(indices->type.getShape());
  return gatherElements(*values, type, [&](ArrayRef<int64_t> position) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d)
      at += position[axis + d] * indexStrides[d];
    int64_t index = indices->iAt(at);
    index = index < 0 ? index + size : index;
    index = std::clamp<int64_t>(index, 0, size - 1);
    int64_t element = index * inputStrides[axis];
    for (int64_t d = 0; d < axis; ++d)
      element += position[d] * inputStrides[d];
    for (int64_t d = axis + 1; d < int64_t(inputShape.size()); ++d)
      element += position[d - 1 + rank] * inputStrides[d];
    return element;
  });
}

/// A product of constants is a constant (transformers' masks compute a
/// cumulative sum of constant positions as a product with a triangle), when
/// it is small: at most 2^16 results and 2^22 multiply-adds. Floats
/// accumulate in double, integers wrap like the run-time product.
OpFoldResult MatmulOp::fold(FoldAdaptor adaptor) {
  // Both operands constant and the product small before either is read (a
  // linear layer's weight is constant, its input is not: reading the weight
  // as double at every canonicalization was 0.7 s of BERT-base's compile).
  auto resultType = cast<RankedTensorType>(getType());
  if (!isa_and_present<DenseElementsAttr>(adaptor.getLhs()) ||
      !isa_and_present<DenseElementsAttr>(adaptor.getRhs()) ||
      !resultType.hasStaticShape() || resultType.getNumElements() > (1 << 16))
    return {};
  auto lhs = read(adaptor.getLhs());
  auto rhs = read(adaptor.getRhs());
  auto type = cast<RankedTensorType>(getType());
  if (!lhs || !rhs || !type.hasStaticShape() || type.getNumElements() > (1 << 16))
    return {};
  ArrayRef<int64_t> a = lhs->type.getShape(), b = rhs->type.getShape();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = shape.size();
  if (a.size() < 2 || b.size() < 2)
    return {};
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (type.getNumElements() * k > (1 << 22))
    return {};
  SmallVector<int64_t> aStrides = stridesOf(a), bStrides = stridesOf(b);
  bool isFloat = lhs->isFloat;
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  std::vector<double> f;
  std::vector<int64_t> i;
  SmallVector<int64_t> position(rank, 0);
  // The operand's element offset of a result batch position (numpy
  // broadcasting: dimensions aligned from the right, size 1 repeats).
  auto batchOffset = [&](ArrayRef<int64_t> operand, ArrayRef<int64_t> strides) {
    int64_t offset = 0, lead = rank - int64_t(operand.size());
    for (int64_t d = 0; d + 2 < int64_t(operand.size()); ++d)
      offset += (operand[d] == 1 ? 0 : position[d + lead]) * strides[d];
    return offset;
  };
  for (int64_t count = type.getNumElements(); count > 0; --count) {
    int64_t row = position[rank - 2], col = position[rank - 1];
    int64_t aBase = batchOffset(a, aStrides) + row * aStrides[a.size() - 2];
    int64_t bBase = batchOffset(b, bStrides) + col;
    if (isFloat) {
      double sum = 0;
      for (int64_t x = 0; x < k; ++x)
        sum += lhs->fAt(aBase + x) * rhs->fAt(bBase + x * bStrides[b.size() - 2]);
      f.push_back(sum);
    } else {
      uint64_t sum = 0;
      for (int64_t x = 0; x < k; ++x)
        sum += uint64_t(lhs->iAt(aBase + x)) *
               uint64_t(rhs->iAt(bBase + x * bStrides[b.size() - 2]));
      i.push_back(width >= 64 ? int64_t(sum)
                              : llvm::SignExtend64(sum & ((uint64_t(1) << width) - 1),
                                                   width));
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++position[d] < shape[d])
        break;
      position[d] = 0;
    }
  }
  (void)m;
  return buildAttr(type, /*splat=*/false, f, i);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return sameTypeOrNull(getInputs()[0], getType());
  auto type = cast<RankedTensorType>(getType());
  if (!foldable(type) ||
      !llvm::all_of(adaptor.getInputs(), [](Attribute operand) {
        return isa_and_present<DenseElementsAttr>(operand);
      }))
    return {};
  SmallVector<Values> inputs;
  for (Attribute operand : adaptor.getInputs()) {
    auto values = read(operand);
    if (!values)
      return {};
    inputs.push_back(std::move(*values));
  }
  int64_t axis = getAxis();
  std::vector<double> f;
  std::vector<int64_t> i;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (const Values &input : inputs) {
      int64_t block = 1;
      for (int64_t d = axis; d < input.type.getRank(); ++d)
        block *= input.type.getDimSize(d);
      for (int64_t n = o * block; n < (o + 1) * block; ++n) {
        if (input.isFloat)
          f.push_back(input.fAt(n));
        else
          i.push_back(input.iAt(n));
      }
    }
  return buildAttr(type, /*splat=*/false, f, i);
}

OpFoldResult PadOp::fold(FoldAdaptor adaptor) {
  // Nothing added (a dynamic dimension keeps its type when padded: the
  // widths, not the types, say whether it grew).
  auto isZero = [](int64_t w) { return w == 0; };
  if (llvm::all_of(getLow(), isZero) && llvm::all_of(getHigh(), isZero))
    return getInput();
  auto values = read(adaptor.getInput());
  auto type = cast<RankedTensorType>(getType());
  if (!values)
    return {};
  ArrayRef<int64_t> low = getLow();
  ArrayRef<int64_t> inputShape = values->type.getShape();
  SmallVector<int64_t> inputStrides = stridesOf(inputShape);
  double fill = getValue().convertToDouble();
  if (!values->isFloat) {
    unsigned width = widthOf(type);
    fill = double(width == 1 ? int64_t(fill != 0) : wrap(int64_t(fill), width));
  }
  return gatherElements(
      *values, type,
      [&](ArrayRef<int64_t> position) -> int64_t {
        int64_t index = 0;
        for (auto [d, p] : llvm::enumerate(position)) {
          int64_t q = p - low[d];
          if (q < 0 || q >= inputShape[d])
            return -1;
          index += q * inputStrides[d];
        }
        return index;
      },
      fill);
}
