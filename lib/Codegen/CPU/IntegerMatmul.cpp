//===- IntegerMatmul.cpp - dl-integer-matmul ------------------------------===//
//
// 8-bit integer matmuls (dl.matmul_integer, lowered by convert-dl-to-linalg
// to a linalg.generic whose body extends both operands to i32, multiplies
// and adds) as micro-kernels of the target's integer dot product, chosen
// from #dl.target:
//   - `vpdpbusd` (AVX-512 VNNI on zmm; AVX-VNNI, or AVX-512 VNNI + VL, on
//     ymm): four u8 x s8 products summed into each i32 lane, 4x the
//     multiply-adds of an i32 vector multiply per instruction;
//   - `vpmaddwd` (AVX-512 BW on zmm, AVX2 on ymm): both operands widened to
//     i16 by their sign, two products summed into each i32 lane, exact for
//     every sign combination (vpmaddubsw is not used: its 16-bit sums
//     saturate). The path for CPUs without VNNI, and for an unsigned B.
//
// Ours: upstream lowers no linalg integer matmul to these (x86vector has the
// bf16 dot and AVX-VNNI-INT8's vpdpbssd only), and LLVM's vectorizer forms
// `partial.reduce.add` of zext x sext as vpdpwssd/vpmaddwd of the generic's
// extended values, not this register-tiled kernel. The design follows
// oneDNN/MLAS/IREE's u8 x s8 kernels:
//
//   - the right operand B [K, N] is packed into panels P[N/L][K/g][L][g]
//     (L = lanes of i32, g = products per lane: 4 bytes or 2 i16),
//     zero-padded: one vector load gives the g k of each of L columns, the
//     layout the instruction multiplies. A constant B (a memref.global) is
//     packed at compile time into a new global; any other B once per call
//     (and per batch when it has batch dimensions);
//   - g consecutive k of a row of A are one i32, broadcast to every lane;
//     for vpmaddwd A's rows are first widened to i16 into a buffer (zero
//     past K, 16 at a time), so the broadcast is a load from memory and not
//     two shuffles per row and step (on AVX2 those had the kernel at the f32
//     GEMM's speed: 1.0-1.1x where vpmaddwd does twice its multiply-adds);
//   - vpdpbusd takes an unsigned A as it is; a signed A is read shifted by
//     128 (xor 0x80: a + 128 as u8) and 128 x the column sums of B, computed
//     with the packing, are subtracted: results are exact;
//   - R rows x V vectors of accumulators (vpdpbusd: the target's register
//     tile, `chooseRegisterTile`, fewer rows where B's panels and A would
//     not fit; vpmaddwd: the most accumulators beside V panels, A and the
//     products, 6 x 2 on AVX2's 16 registers) stay in registers over the whole
//     reduction; the output's previous contents (the fill of 0) are added
//     once at the end; columns past N are masked (vector.maskedload/
//     maskedstore: only in tiles that reach past N), rows past M run
//     one-row kernels, a K that is not a multiple of g ends with a masked
//     load of A (vpdpbusd) or reads the widened copy's zeros (vpmaddwd);
//   - the outer loop over column groups (or row tiles when there are fewer
//     groups than twice the threads) is an scf.parallel, which
//     dl-outline-parallel runs on dlc's thread pool, when the product has at
//     least `min-parallel-work` multiply-adds.
//
// Refused (left to the generic, which the affine passes vectorize exactly):
// a target with neither instruction (the lit tests compile for x86-64's
// baseline), an A or C whose last dimension is strided, a body other than
// acc + ext(a) * ext(b).
//
// Assumes the IR verifies and sizes fit in int64 (dl-check-sizes).
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/Passes.h"
#include "dl/Target/Target.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

namespace mlir::dl {
#define GEN_PASS_DEF_DLINTEGERMATMUL
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// A matched integer matmul: C[batch..., m, n] += ext(A[...]) * ext(B[...]).
struct IntegerMatmul {
  linalg::GenericOp op;
  Value a, b, c;
  bool aUnsigned = false, bUnsigned = false;
  int64_t batchRank = 0;
  AffineMap aMap, bMap;
};

/// A dot-product instruction: the intrinsic, its i32 lanes, the products
/// `group` summed into each lane, and whether it adds to its accumulator
/// operand (vpdpbusd) or returns the sums (vpmaddwd).
struct DotProduct {
  StringRef intrinsic;
  int64_t lanes = 0;
  int64_t group = 4;
  bool accumulates = true;
  /// vpdpbusd: u8 x s8 bytes; vpmaddwd: i16 x i16 (both operands widened
  /// from 8 bits, by their sign: exact for every sign combination).
  bool isVNNI() const { return group == 4; }
};

/// The dot products the target offers: `vnni` (u8 x s8, 4 per lane) and
/// `widening` (i16 x i16, 2 per lane: AVX-512 BW or AVX2, the exact path
/// where there is no VNNI, or for an unsigned B).
struct DotProducts {
  std::optional<DotProduct> vnni, widening;
};

DotProducts dotProductsOf(const dl::TargetInfo &target) {
  DotProducts dots;
  if (!target.isX86())
    return dots;
  bool zmm = target.getVectorBits() >= 512;
  if (target.hasFeature("avx512vnni") && zmm)
    dots.vnni = DotProduct{"llvm.x86.avx512.vpdpbusd.512", 16, 4, true};
  else if (target.hasFeature("avxvnni") ||
           (target.hasFeature("avx512vnni") && target.hasFeature("avx512vl")))
    dots.vnni = DotProduct{"llvm.x86.avx512.vpdpbusd.256", 8, 4, true};
  if (target.hasFeature("avx512bw") && zmm)
    dots.widening = DotProduct{"llvm.x86.avx512.pmaddw.d.512", 16, 2, false};
  else if (target.hasFeature("avx2"))
    dots.widening = DotProduct{"llvm.x86.avx2.pmadd.wd", 8, 2, false};
  return dots;
}

/// Whether `expr` is loop `dim`.
bool isDim(AffineExpr expr, int64_t dim) {
  auto d = dyn_cast<AffineDimExpr>(expr);
  return d && d.getPosition() == dim;
}

/// Whether `map`'s leading results (all but the last two) are batch loops
/// (dims below `batchRank`) or the constant 0 (a broadcast), and its last
/// two are loops `row` and `col`.
bool isOperandMap(AffineMap map, int64_t batchRank, int64_t row, int64_t col) {
  int64_t results = map.getNumResults();
  if (results < 2 || !isDim(map.getResult(results - 2), row) ||
      !isDim(map.getResult(results - 1), col))
    return false;
  for (AffineExpr expr : map.getResults().drop_back(2)) {
    if (auto d = dyn_cast<AffineDimExpr>(expr)) {
      if (d.getPosition() >= batchRank)
        return false;
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(expr);
    if (!c || c.getValue() != 0)
      return false;
  }
  return true;
}

/// The extension of block argument `arg` that `value` is, or failure;
/// `isUnsigned` says which.
bool isExtensionOf(Value value, BlockArgument arg, bool &isUnsigned) {
  if (auto ext = value.getDefiningOp<arith::ExtSIOp>()) {
    isUnsigned = false;
    return ext.getIn() == arg;
  }
  if (auto ext = value.getDefiningOp<arith::ExtUIOp>()) {
    isUnsigned = true;
    return ext.getIn() == arg;
  }
  return false;
}

bool isLastDimContiguous(Value memref) {
  return cast<MemRefType>(memref.getType()).isLastDimUnitStride();
}

std::optional<IntegerMatmul> matchIntegerMatmul(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  IntegerMatmul m;
  m.op = op;
  m.a = op.getDpsInputOperand(0)->get();
  m.b = op.getDpsInputOperand(1)->get();
  m.c = op.getDpsInitOperand(0)->get();
  Type i8 = IntegerType::get(op.getContext(), 8);
  Type i32 = IntegerType::get(op.getContext(), 32);
  if (getElementTypeOrSelf(m.a.getType()) != i8 ||
      getElementTypeOrSelf(m.b.getType()) != i8 ||
      getElementTypeOrSelf(m.c.getType()) != i32)
    return std::nullopt;

  // Loops (batch..., m, n, k): every one parallel but the last.
  int64_t loops = op.getNumLoops();
  if (loops < 3 || op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  m.batchRank = loops - 3;
  int64_t mDim = loops - 3, nDim = loops - 2, kDim = loops - 1;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap cMap = maps[2];
  if (cMap.getNumResults() != loops - 1)
    return std::nullopt;
  for (int64_t i = 0; i < loops - 1; ++i)
    if (!isDim(cMap.getResult(i), i))
      return std::nullopt;
  m.aMap = maps[0];
  m.bMap = maps[1];
  if (!isOperandMap(m.aMap, m.batchRank, mDim, kDim) ||
      !isOperandMap(m.bMap, m.batchRank, kDim, nDim))
    return std::nullopt;
  if (!isLastDimContiguous(m.a) || !isLastDimContiguous(m.c))
    return std::nullopt;

  // Body: yield acc + ext(a) * ext(b), B extended by its sign.
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 5)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if ((add.getLhs() == acc) == (add.getRhs() == acc))
    return std::nullopt;
  auto mul = product.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return std::nullopt;
  bool lhsUnsigned = false, rhsUnsigned = false;
  Value x = mul.getLhs(), y = mul.getRhs();
  if (!isExtensionOf(x, body.getArgument(0), lhsUnsigned))
    std::swap(x, y);
  if (!isExtensionOf(x, body.getArgument(0), lhsUnsigned) ||
      !isExtensionOf(y, body.getArgument(1), rhsUnsigned))
    return std::nullopt;
  m.aUnsigned = lhsUnsigned;
  m.bUnsigned = rhsUnsigned;
  return m;
}

/// The constant bytes of a memref.global `B` reads, when B is a 2-D
/// constant global of static shape.
std::optional<ArrayRef<char>> constantBytes(Value value, ModuleOp module,
                                            memref::GlobalOp &global) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  auto get = value.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return std::nullopt;
  global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  if (!global || !global.getConstant() || !global.getInitialValue())
    return std::nullopt;
  MemRefType type = global.getType();
  if (type.getRank() != 2 || !type.hasStaticShape() ||
      !type.getLayout().isIdentity())
    return std::nullopt;
  Attribute init = *global.getInitialValue();
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(init)) {
    if (dense.isSplat())
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(init)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    return blob->getData();
  }
  return std::nullopt;
}

/// The elementwise nest that reads a product's sums after it
/// (requantization: the zero points' correction, the scales, the bias, the
/// activation, the rounding to 8 bits), computed on the kernel's tiles while
/// they are in registers instead of going through C.
struct Consumer {
  linalg::GenericOp op;
  unsigned cInput = 0;               // the input that reads C
  memref::ExpandShapeOp expand;      // C's rows split into several dims, or null
  linalg::FillOp fill;               // C's zero fill
  // Ops between the product and the consumer that write what the consumer
  // reads (BERT's zero-point corrections, [1, N] nests written after the
  // product): moved above the product, in order.
  SmallVector<Operation *> hoisted;
};

/// Where `value` lives: the buffer it is a view of (an allocation, an
/// argument, a global, or the first op not known to view its operand) and
/// its byte range within it when known (views of an arena at constant
/// offsets, through narrowing views).
struct Place {
  Value root;
  std::optional<std::pair<int64_t, int64_t>> bytes; // [begin, end) in root
};

/// The byte size of a memref of static shape and identity layout, or none.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() *
         ((type.getElementTypeBitWidth() + 7) / 8);
}

Place placeOf(Value value) {
  std::optional<std::pair<int64_t, int64_t>> bytes;
  bool known = true; // bytes, once set, still hold relative to `value`
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> offset =
          getConstantIntValue(view.getByteShift());
      std::optional<int64_t> size = staticBytes(view.getType());
      if (!offset)
        known = false;
      else if (bytes) // a view of a view: shift by the outer offset
        bytes = std::make_pair(bytes->first + *offset,
                               bytes->second + *offset);
      else if (size && known)
        bytes = std::make_pair(*offset, *offset + *size);
      else
        known = false;
      value = view.getSource();
      continue;
    }
    // A subview of static layout: the bytes from its first to its last
    // element, relative to the base its layout's offset counts from (that
    // of the views and allocations under it, up to a memref.view, which
    // shifts them). A padded buffer's border and its interior are apart.
    if (auto subview = dyn_cast<memref::SubViewOp>(def);
        subview && !bytes && known) {
      MemRefType type = subview.getType();
      SmallVector<int64_t> strides;
      int64_t offset;
      if (type.hasStaticShape() && type.getElementType().isIntOrFloat() &&
          succeeded(type.getStridesAndOffset(strides, offset)) &&
          !ShapedType::isDynamic(offset) &&
          llvm::none_of(strides, ShapedType::isDynamic) &&
          type.getNumElements() > 0) {
        int64_t last = offset;
        for (auto [size, stride] : llvm::zip(type.getShape(), strides))
          last += (size - 1) * stride;
        int64_t element = (type.getElementTypeBitWidth() + 7) / 8;
        if (llvm::all_of(strides, [](int64_t s) { return s >= 0; }))
          bytes = std::make_pair(offset * element, (last + 1) * element);
      }
    }
    // Narrowing or renaming views: within their source's bytes.
    if (isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
            memref::CastOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    // A reinterpretation may reach outside what it was made from.
    if (isa<memref::ReinterpretCastOp>(def)) {
      known = false;
      value = def->getOperand(0);
      continue;
    }
    break;
  }
  if (!known)
    bytes.reset();
  return {value, bytes};
}

/// Static offsets, sizes and strides of a subview, or none.
bool staticBox(memref::SubViewOp subview, SmallVectorImpl<int64_t> &offsets,
               SmallVectorImpl<int64_t> &sizes,
               SmallVectorImpl<int64_t> &strides) {
  for (auto [list, out] :
       {std::make_pair(subview.getMixedOffsets(), &offsets),
        std::make_pair(subview.getMixedSizes(), &sizes),
        std::make_pair(subview.getMixedStrides(), &strides)}) {
    for (OpFoldResult v : list) {
      std::optional<int64_t> c = getConstantIntValue(v);
      if (!c)
        return false;
      out->push_back(*c);
    }
  }
  return true;
}

/// Whether the memory of `x` and `y` cannot overlap: distinct allocations
/// (an allocation and an argument or a global included), disjoint byte
/// ranges of one arena, or subviews of one buffer whose static boxes are
/// apart in some dimension (a padded buffer's border and its interior).
bool provablyDisjoint(Value x, Value y) {
  auto xs = x.getDefiningOp<memref::SubViewOp>();
  auto ys = y.getDefiningOp<memref::SubViewOp>();
  if (xs && ys && xs.getSource() == ys.getSource()) {
    SmallVector<int64_t> xo, xz, xt, yo, yz, yt;
    if (staticBox(xs, xo, xz, xt) && staticBox(ys, yo, yz, yt) &&
        xo.size() == yo.size()) {
      for (size_t d = 0; d < xo.size(); ++d) {
        if (xz[d] == 0 || yz[d] == 0)
          return true;
        int64_t xEnd = xo[d] + (xz[d] - 1) * xt[d];
        int64_t yEnd = yo[d] + (yz[d] - 1) * yt[d];
        if (xEnd < yo[d] || yEnd < xo[d])
          return true;
      }
    }
  }
  Place px = placeOf(x), py = placeOf(y);
  if (px.root != py.root) {
    auto fresh = [](Value root) {
      return root.getDefiningOp<memref::AllocOp>() ||
             root.getDefiningOp<memref::AllocaOp>();
    };
    auto global = [](Value root) {
      return root.getDefiningOp<memref::GetGlobalOp>();
    };
    // Roots whose buffers are known: a fresh allocation aliases no other
    // known root; two globals only themselves; two arguments may alias, and
    // a root made by an op this does not see through may be anything.
    auto knownRoot = [&](Value root) {
      auto arg = dyn_cast<BlockArgument>(root);
      return fresh(root) || global(root) ||
             (arg && arg.getOwner()->isEntryBlock() &&
              isa<FunctionOpInterface>(arg.getOwner()->getParentOp()));
    };
    if (!knownRoot(px.root) || !knownRoot(py.root))
      return false;
    if (fresh(px.root) || fresh(py.root))
      return true;
    if (auto gx = global(px.root))
      if (auto gy = global(py.root))
        return gx.getName() != gy.getName();
    return false;
  }
  return px.bytes && py.bytes &&
         (px.bytes->second <= py.bytes->first ||
          py.bytes->second <= px.bytes->first);
}

bool hoistable(Value value, Operation *point);

/// The memrefs `op` reads and writes, when they are all the memory it
/// touches: a linalg op on buffers whose body has no memory effects (its
/// inits are read and written), or a memref.copy.
bool accessesOf(Operation *op, SmallVectorImpl<Value> &reads,
                SmallVectorImpl<Value> &writes) {
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    reads.push_back(copy.getSource());
    writes.push_back(copy.getTarget());
    return true;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() || !linalgOp.getBlock())
    return false;
  bool effectFree = true;
  linalgOp.getBlock()->walk([&](Operation *inner) {
    effectFree &= isMemoryEffectFree(inner);
  });
  if (!effectFree)
    return false;
  for (OpOperand *input : linalgOp.getDpsInputOperands())
    if (isa<MemRefType>(input->get().getType()))
      reads.push_back(input->get());
  for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
    reads.push_back(init.get());
    writes.push_back(init.get());
  }
  return true;
}

/// Whether some memref of `xs` may share memory with one of `ys`.
bool mayOverlap(ArrayRef<Value> xs, ArrayRef<Value> ys) {
  for (Value x : xs)
    for (Value y : ys)
      if (!provablyDisjoint(x, y))
        return true;
  return false;
}

/// Whether `op` and the values its body captures can be moved before
/// `point` (its operands' views and allocations with it).
bool movableBefore(Operation *op, Operation *point) {
  if (!llvm::all_of(op->getOperands(),
                    [&](Value v) { return hoistable(v, point); }))
    return false;
  bool ok = true;
  op->walk([&](Operation *inner) {
    if (inner == op)
      return;
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentBlock()->getParentOp()))
        ok &= hoistable(v, point);
  });
  return ok;
}

/// Whether `op` is elementwise scalar arithmetic the epilogue can run on
/// vectors: arith or math, no regions, scalar int or float results.
bool isVectorizableScalarOp(Operation &op) {
  StringRef dialect = op.getDialect() ? op.getDialect()->getNamespace() : "";
  if ((dialect != "arith" && dialect != "math") || op.getNumRegions() != 0 ||
      op.getNumResults() != 1)
    return false;
  return llvm::all_of(op.getResultTypes(),
                      [](Type t) { return t.isIntOrFloat(); }) &&
         llvm::all_of(op.getOperandTypes(),
                      [](Type t) { return t.isIntOrFloat(); });
}

/// The consumer of `m`'s sums the kernel can compute on its tiles, if any:
/// C is 2-D, zero-filled before the product and read after it only by one
/// all-parallel linalg.generic (directly or through an expand_shape of its
/// rows) whose body is scalar arith/math not reading its own output, whose
/// other inputs are read along the columns (vector loads) or not depend on
/// them (broadcast), and nothing between the product and the consumer
/// touches what the consumer reads or writes, and the consumer's output is
/// apart from the product's operands (the tiles write it while other tiles
/// still read A and B).
std::optional<Consumer> matchConsumer(IntegerMatmul &m) {
  if (m.batchRank != 0)
    return std::nullopt;
  Consumer c;
  Operation *reader = nullptr;
  for (Operation *user : m.c.getUsers()) {
    if (user == m.op.getOperation() || isa<memref::DeallocOp>(user))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user)) {
      if (c.fill || !matchPattern(fill.value(), m_Zero()) ||
          fill->getBlock() != m.op->getBlock() ||
          !fill->isBeforeInBlock(m.op))
        return std::nullopt;
      c.fill = fill;
      continue;
    }
    if (reader)
      return std::nullopt;
    reader = user;
  }
  if (!c.fill || !reader)
    return std::nullopt;
  Value cRead = m.c;
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(reader)) {
    SmallVector<ReassociationIndices> groups =
        expand.getReassociationIndices();
    MemRefType type = expand.getResultType();
    // Rows split into (..., h, w), the columns alone and contiguous.
    if (groups.size() != 2 || groups[1].size() != 1 ||
        !expand.getResult().hasOneUse())
      return std::nullopt;
    for (int64_t d : ArrayRef<int64_t>(groups[0]).drop_front())
      if (type.isDynamicDim(d))
        return std::nullopt;
    c.expand = expand;
    cRead = expand.getResult();
    reader = *expand.getResult().getUsers().begin();
  }
  auto op = dyn_cast<linalg::GenericOp>(reader);
  if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || op->getBlock() != m.op->getBlock() ||
      !m.op->isBeforeInBlock(op))
    return std::nullopt;
  int64_t loops = op.getNumLoops();
  if (loops != cast<MemRefType>(cRead.getType()).getRank())
    return std::nullopt;
  c.op = op;
  Block &body = op.getRegion().front();
  if (!body.getArgument(body.getNumArguments() - 1).use_empty())
    return std::nullopt;
  // Maps: C's and the output's the identity; other inputs' results loops or
  // 0, the columns' loop (if any) last and contiguous.
  Value out = op.getDpsInitOperand(0)->get();
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      !cast<MemRefType>(out.getType()).isLastDimUnitStride())
    return std::nullopt;
  bool sawC = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (input->get() == cRead) {
      if (sawC || !map.isIdentity())
        return std::nullopt;
      sawC = true;
      c.cInput = input->getOperandNumber();
      continue;
    }
    if (!isa<MemRefType>(input->get().getType()))
      return std::nullopt;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      auto d = dyn_cast<AffineDimExpr>(e);
      auto k = dyn_cast<AffineConstantExpr>(e);
      if (!(d || (k && k.getValue() == 0)))
        return std::nullopt;
      if (d && d.getPosition() == loops - 1 &&
          (i + 1 != map.getNumResults() ||
           !cast<MemRefType>(input->get().getType()).isLastDimUnitStride()))
        return std::nullopt;
    }
  }
  if (!sawC)
    return std::nullopt;
  for (Operation &inner : body.without_terminator())
    if (!isVectorizableScalarOp(inner))
      return std::nullopt;
  // Values from above: constants only (rebuilt as splats).
  bool capturesOnlyConstants = true;
  body.walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (v.getParentBlock() != &body && !matchPattern(v, m_Constant()))
        capturesOnlyConstants = false;
  });
  if (!capturesOnlyConstants)
    return std::nullopt;

  // Memory: the consumer moves up to the product, with the views it reads
  // and writes through.
  SmallVector<Value> read;
  for (OpOperand *input : op.getDpsInputOperands())
    if (input->get() != cRead)
      read.push_back(input->get());
  if (!hoistable(out, m.op) ||
      !llvm::all_of(read, [&](Value r) { return hoistable(r, m.op); }))
    return std::nullopt;
  if (!provablyDisjoint(out, m.a) || !provablyDisjoint(out, m.b))
    return std::nullopt;
  // The ops between: views, constants and fresh allocations (the
  // consumer's output may be one: it moves up with the consumer) touch
  // nothing. Every other op must be one whose memory is its operands
  // (accessesOf), and either stays, the consumer moving up past it (it
  // touches neither C nor the consumer's output, and writes nothing the
  // consumer reads: the other products of BERT's Q, K, V), or moves above
  // the product (it writes what the consumer reads, or what an op moved up
  // after it touches; it must then touch neither C nor write A or B).
  // Decided from the last to the first, so an op that feeds one moved up
  // moves up too.
  struct Between {
    Operation *op;
    SmallVector<Value> reads, writes, all;
    bool up = false;
  };
  SmallVector<Between> between;
  for (Operation *o = m.op->getNextNode(); o != op; o = o->getNextNode()) {
    if (o == c.expand.getOperation() || isMemoryEffectFree(o) ||
        isa<memref::AllocOp>(o))
      continue;
    Between entry{o, {}, {}, {}};
    if (!accessesOf(o, entry.reads, entry.writes))
      return std::nullopt;
    entry.all.append(entry.reads);
    entry.all.append(entry.writes);
    between.push_back(std::move(entry));
  }
  SmallVector<Value> consumerMemory(read);
  consumerMemory.push_back(out);
  for (int64_t i = static_cast<int64_t>(between.size()) - 1; i >= 0; --i) {
    Between &y = between[i];
    bool stays = !mayOverlap(y.all, {m.c, out}) &&
                 !mayOverlap(y.writes, consumerMemory);
    for (size_t j = i + 1; stays && j < between.size(); ++j)
      if (between[j].up && (mayOverlap(between[j].writes, y.all) ||
                            mayOverlap(between[j].reads, y.writes)))
        stays = false;
    if (stays)
      continue;
    if (mayOverlap(y.all, {m.c}) || mayOverlap(y.writes, {m.a, m.b}) ||
        !movableBefore(y.op, m.op))
      return std::nullopt;
    y.up = true;
  }
  for (Between &y : between)
    if (y.up)
      c.hoisted.push_back(y.op);
  return c;
}

/// Whether `value` is available before `point`, or can be by moving the
/// memory-effect-free ops that define it (views, subviews, constants) or its
/// allocation there.
bool hoistable(Value value, Operation *point) {
  Operation *def = value.getDefiningOp();
  // Arguments and values of enclosing blocks dominate `point` already.
  if (!def || def->getBlock() != point->getBlock() ||
      def->isBeforeInBlock(point))
    return true;
  if (def == point ||
      !(isMemoryEffectFree(def) || isa<memref::AllocOp>(def)) ||
      def->getNumRegions() != 0)
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value v) { return hoistable(v, point); });
}

void hoist(Value value, Operation *point) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock() ||
      def->isBeforeInBlock(point))
    return;
  for (Value v : def->getOperands())
    hoist(v, point);
  def->moveBefore(point);
}

/// Builds the kernel of one matched matmul.
class Emitter {
public:
  Emitter(IntegerMatmul &m, DotProduct dot, dl::RegisterTileShape tile,
          int64_t minParallelWork, int64_t threads,
          std::optional<Consumer> consumer = std::nullopt)
      : m(m), dot(dot), tile(tile), minParallelWork(minParallelWork),
        threads(threads), b(m.op), loc(m.op.getLoc()), consumer(consumer) {
    MLIRContext *ctx = m.op.getContext();
    i8 = IntegerType::get(ctx, 8);
    i32 = IntegerType::get(ctx, 32);
    lanes = dot.lanes;
    group = dot.group;
    elementType = dot.isVNNI() ? i8 : IntegerType::get(ctx, 16);
    accType = VectorType::get({lanes}, i32);
    operandType = VectorType::get({group * lanes}, elementType);
    groupType = VectorType::get({group}, i8);
  }

  void emit(ModuleOp module);

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value dim(Value memref, int64_t d) {
    int64_t size = cast<MemRefType>(memref.getType()).getDimSize(d);
    if (!ShapedType::isDynamic(size))
      return index(size);
    return memref::DimOp::create(b, loc, memref, d);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value ceilDiv(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, add(x, index(y - 1)), index(y));
  }

  /// Indices of an operand read through `map` at batch loop values `batch`
  /// and (row, col).
  SmallVector<Value> operandIndices(AffineMap map, Value row, Value col) {
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults().drop_back(2)) {
      if (auto d = dyn_cast<AffineDimExpr>(expr))
        indices.push_back(batch[d.getPosition()]);
      else
        indices.push_back(index(0));
    }
    indices.push_back(row);
    indices.push_back(col);
    return indices;
  }

  bool bVariesWithBatch() {
    return llvm::any_of(m.bMap.getResults().drop_back(2),
                        [](AffineExpr e) { return isa<AffineDimExpr>(e); });
  }

  void packAtRunTime();
  bool packAtCompileTime(ModuleOp module);
  void emitBatch();
  void emitTile(Value row0, Value nb0, int64_t rows, int64_t vectors);
  void emitColumns(Value row0, Value nb0);
  void at(OpBuilder &nested, function_ref<void()> body);
  void fullOrEach(Value start, int64_t width, Value bound,
                  function_ref<void(Value, int64_t)> body);
  Value loadGroup(Value row, Value k, Value valid);
  void widenA();
  void storeTile(Value row0, Value col, ArrayRef<Value> sums, Value shift,
                 Value mask);
  void storeConsumerTile(ArrayRef<SmallVector<Value>> rowIndices, Value col,
                         ArrayRef<Value> sums, Value shift, Value mask);
  SmallVector<Value> consumerRowIndices(Value row);
  void eraseConsumer();

  IntegerMatmul &m;
  DotProduct dot;
  dl::RegisterTileShape tile;
  int64_t minParallelWork, threads;
  OpBuilder b;
  Location loc;
  Type i8, i32, elementType; // elementType: of the packed B (i8 or i16)
  int64_t lanes, group;
  VectorType accType, operandType, groupType;

  Value rowsM, colsN, depthK, panels, groups, fullGroups;
  Value packed;     // [panels][groups][group * lanes] of elementType
  Value correction; // [panels * lanes] i32: 128 x column sums (signed A)
  Value widened;    // vpmaddwd: A's rows as i16, [M][K rounded up to 16]
  Value widenedCols;
  bool ownsPacked = false, packAtCompileTimeDone = false;
  SmallVector<Value> batch;
  std::optional<Consumer> consumer;
};

/// B packed by loops at run time (and, for a signed A, its column sums).
void Emitter::packAtRunTime() {
  Value zero32 = arith::ConstantIntOp::create(b, loc, i32, 0);
  Value c0 = index(0), c1 = index(1), cGroup = index(group);
  Value cLanes = index(lanes);
  auto forLoop = [&](Value ub, function_ref<void(Value)> body) {
    scf::ForOp::create(b, loc, c0, ub, c1, ValueRange{},
                       [&](OpBuilder &nested, Location, Value iv, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPoint(nested.getInsertionBlock(),
                                             nested.getInsertionPoint());
                         body(iv);
                         scf::YieldOp::create(b, loc);
                       });
  };
  // The element B[k, n], or 0 outside B.
  auto element = [&](Value k, Value n, Type type) -> Value {
    Value inside = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k, depthK),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, n, colsN));
    auto ifOp = scf::IfOp::create(
        b, loc, inside,
        [&](OpBuilder &nested, Location l) {
          Value v = memref::LoadOp::create(nested, l, m.b,
                                           operandIndices(m.bMap, k, n));
          if (type != i8)
            v = m.bUnsigned ? arith::ExtUIOp::create(nested, l, type, v).getResult()
                            : arith::ExtSIOp::create(nested, l, type, v).getResult();
          scf::YieldOp::create(nested, l, v);
        },
        [&](OpBuilder &nested, Location l) {
          scf::YieldOp::create(
              nested, l, arith::ConstantIntOp::create(nested, l, type, 0).getResult());
        });
    return ifOp.getResult(0);
  };
  forLoop(panels, [&](Value p) {
    forLoop(groups, [&](Value q) {
      forLoop(cLanes, [&](Value l) {
        Value n = add(mul(p, cLanes), l);
        for (int64_t j = 0; j < group; ++j) {
          Value k = add(mul(q, cGroup), index(j));
          Value v = element(k, n, elementType);
          memref::StoreOp::create(b, loc, v, packed,
                                  ValueRange{p, q, add(mul(l, cGroup), index(j))});
        }
      });
    });
  });
  if (!correction)
    return;
  forLoop(mul(panels, cLanes), [&](Value n) {
    auto sum = scf::ForOp::create(
        b, loc, c0, depthK, c1, ValueRange{zero32},
        [&](OpBuilder &nested, Location l, Value k, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          Value v = element(k, n, i32);
          scf::YieldOp::create(b, l, ValueRange{add(acc[0], v)});
        });
    Value shifted = arith::ShLIOp::create(
        b, loc, sum.getResult(0), arith::ConstantIntOp::create(b, loc, i32, 7));
    memref::StoreOp::create(b, loc, shifted, correction, ValueRange{n});
  });
}

/// A constant 2-D B packed now, into new globals; false if B is not one.
bool Emitter::packAtCompileTime(ModuleOp module) {
  if (bVariesWithBatch() || m.bMap.getNumResults() != 2)
    return false;
  memref::GlobalOp global;
  std::optional<ArrayRef<char>> bytes = constantBytes(m.b, module, global);
  if (!bytes)
    return false;
  ArrayRef<int64_t> shape = global.getType().getShape();
  int64_t k = shape[0], n = shape[1];
  if (static_cast<int64_t>(bytes->size()) != k * n)
    return false;
  int64_t np = (n + lanes - 1) / lanes, kq = (k + group - 1) / group;
  // Bytes for vpdpbusd, 16-bit values (widened by B's sign) for vpmaddwd.
  int64_t width = dot.isVNNI() ? 1 : 2;
  std::vector<char> data(np * kq * group * lanes * width, 0);
  std::vector<int32_t> sums(np * lanes, 0);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t nn = 0; nn < n; ++nn) {
      uint8_t byte = static_cast<uint8_t>((*bytes)[kk * n + nn]);
      int32_t v = m.bUnsigned ? int32_t(byte) : int32_t(int8_t(byte));
      int64_t p = nn / lanes, l = nn % lanes;
      int64_t at = ((p * kq + kk / group) * lanes + l) * group + kk % group;
      if (width == 1) {
        data[at] = static_cast<char>(byte);
      } else {
        int16_t wide = static_cast<int16_t>(v);
        std::memcpy(&data[at * 2], &wide, 2);
      }
      sums[nn] += v;
    }

  OpBuilder top(module.getBodyRegion());
  top.setInsertionPoint(global);
  SymbolTable symbols(module);
  auto makeGlobal = [&](StringRef suffix, MemRefType type,
                        ArrayRef<char> raw) -> memref::GlobalOp {
    auto tensorType =
        RankedTensorType::get(type.getShape(), type.getElementType());
    auto init = DenseElementsAttr::getFromRawBuffer(tensorType, raw);
    auto g = memref::GlobalOp::create(
        top, global.getLoc(), global.getSymName().str() + suffix.str(),
        top.getStringAttr("private"), type, init, /*constant=*/true,
        top.getI64IntegerAttr(64));
    symbols.insert(g); // renames on a clash
    return g;
  };
  auto packedType = MemRefType::get({np, kq, group * lanes}, elementType);
  memref::GlobalOp packedGlobal = makeGlobal(
      (dot.isVNNI() ? "_vnni" : "_i16x") + std::to_string(lanes), packedType,
      ArrayRef<char>(data.data(), data.size()));
  packed = memref::GetGlobalOp::create(b, loc, packedType,
                                       packedGlobal.getSymName());
  if (!m.aUnsigned && dot.isVNNI()) {
    for (int32_t &s : sums)
      s *= 128;
    auto sumsType = MemRefType::get({np * lanes}, i32);
    memref::GlobalOp sumsGlobal = makeGlobal(
        "_colsum128", sumsType,
        ArrayRef<char>(reinterpret_cast<const char *>(sums.data()),
                       sums.size() * sizeof(int32_t)));
    correction = memref::GetGlobalOp::create(b, loc, sumsType,
                                             sumsGlobal.getSymName());
  }
  return true;
}

/// `group` bytes of row `row` of A from column `k` (those at or past K as 0
/// when `valid`, the count of columns left, is given) as one i32 broadcast
/// to every lane: bytes shifted to u8 for a signed A (vpdpbusd), or two
/// values widened to i16 by A's sign (vpmaddwd).
Value Emitter::loadGroup(Value row, Value k, Value valid) {
  if (widened) {
    // Two 16-bit values of the widened copy (zero past K): one i32, which
    // LLVM broadcasts straight from memory (vpbroadcastd ymm, m32: a load,
    // no shuffle).
    Value pair = vector::LoadOp::create(
        b, loc, VectorType::get({group}, elementType), widened,
        ValueRange{row, k});
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, i32), pair);
    Value scalar =
        vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
    Value splat = vector::BroadcastOp::create(b, loc, accType, scalar);
    return vector::BitCastOp::create(b, loc, operandType, splat);
  }
  SmallVector<Value> indices = operandIndices(m.aMap, row, k);
  Value bytes;
  if (valid) {
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({group}, b.getI1Type()), ValueRange{valid});
    Value zeros = arith::ConstantOp::create(
        b, loc, groupType, DenseElementsAttr::get(groupType, b.getI8IntegerAttr(0)));
    bytes = vector::MaskedLoadOp::create(b, loc, groupType, m.a, indices, mask,
                                         zeros);
  } else {
    bytes = vector::LoadOp::create(b, loc, groupType, m.a, indices);
  }
  if (dot.isVNNI() && !m.aUnsigned) {
    Value bias = arith::ConstantOp::create(
        b, loc, groupType,
        DenseElementsAttr::get(groupType, b.getIntegerAttr(i8, -128)));
    bytes = arith::XOrIOp::create(b, loc, bytes, bias);
  }
  if (!dot.isVNNI()) {
    auto wide = VectorType::get({group}, elementType);
    bytes = m.aUnsigned ? arith::ExtUIOp::create(b, loc, wide, bytes).getResult()
                        : arith::ExtSIOp::create(b, loc, wide, bytes).getResult();
  }
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, i32), bytes);
  Value scalar = vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
  Value splat = vector::BroadcastOp::create(b, loc, accType, scalar);
  return vector::BitCastOp::create(b, loc, operandType, splat);
}

/// C[row0 + r, (nb0 + v) * lanes ...] for r < rows, v < vectors: the whole
/// reduction in registers, then added to C.
void Emitter::emitTile(Value row0, Value nb0, int64_t rows, int64_t vectors) {
  Value zeroAcc = arith::ConstantOp::create(
      b, loc, accType, DenseElementsAttr::get(accType, b.getI32IntegerAttr(0)));
  SmallVector<Value> inits(rows * vectors, zeroAcc);
  StringAttr intrinsic = b.getStringAttr(dot.intrinsic);
  Value cGroup = index(group);
  auto step = [&](Value q, ValueRange accs, Value valid) {
    SmallVector<Value> panelsB;
    for (int64_t v = 0; v < vectors; ++v)
      panelsB.push_back(vector::LoadOp::create(
          b, loc, operandType, packed,
          ValueRange{add(nb0, index(v)), q, index(0)}));
    SmallVector<Value> next(accs);
    for (int64_t r = 0; r < rows; ++r) {
      Value a = loadGroup(add(row0, index(r)), mul(q, cGroup), valid);
      for (int64_t v = 0; v < vectors; ++v) {
        Value &acc = next[r * vectors + v];
        if (dot.accumulates) {
          acc = LLVM::CallIntrinsicOp::create(b, loc, accType, intrinsic,
                                              ValueRange{acc, a, panelsB[v]})
                    .getResult(0);
        } else {
          Value sums = LLVM::CallIntrinsicOp::create(b, loc, accType, intrinsic,
                                                     ValueRange{a, panelsB[v]})
                           .getResult(0);
          acc = add(acc, sums);
        }
      }
    }
    return next;
  };
  // With A widened (zero past K, as B's panels are) every group is whole.
  auto loop = scf::ForOp::create(
      b, loc, index(0), widened ? groups : fullGroups, index(1), inits,
      [&](OpBuilder &nested, Location, Value q, ValueRange accs) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        scf::YieldOp::create(b, loc, step(q, accs, Value()));
      });
  SmallVector<Value> accs(loop.getResults());

  // K % group columns left: one more step, A's bytes past K masked.
  if (!widened) {
    Value left =
        arith::SubIOp::create(b, loc, depthK, mul(fullGroups, cGroup));
    Value hasTail = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          left, index(0));
    auto tail = scf::IfOp::create(
        b, loc, hasTail,
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, step(fullGroups, accs, left));
        },
        [&](OpBuilder &nested, Location) {
          scf::YieldOp::create(nested, loc, accs);
        });
    accs.assign(tail.getResults().begin(), tail.getResults().end());
  }

  // C += acc (- 128 x column sums): plain vector loads and stores where the
  // tile's columns are all inside C (every tile when N is a constant
  // multiple of the lanes: masked moves are microcoded on AMD, vpmaskmovd's
  // store alone ~12 cycles on Zen 3), masked past N otherwise.
  auto epilogue = [&](bool masked) {
    auto maskType = VectorType::get({lanes}, b.getI1Type());
    SmallVector<SmallVector<Value>> rowIndices;
    if (consumer)
      for (int64_t r = 0; r < rows; ++r)
        rowIndices.push_back(consumerRowIndices(add(row0, index(r))));
    for (int64_t v = 0; v < vectors; ++v) {
      Value col = mul(add(nb0, index(v)), index(lanes));
      Value mask;
      if (masked)
        mask = vector::CreateMaskOp::create(
            b, loc, maskType,
            ValueRange{arith::SubIOp::create(b, loc, colsN, col)});
      Value shift;
      if (correction)
        shift = vector::LoadOp::create(b, loc, accType, correction,
                                       ValueRange{col});
      SmallVector<Value> sums;
      for (int64_t r = 0; r < rows; ++r)
        sums.push_back(accs[r * vectors + v]);
      if (consumer)
        storeConsumerTile(rowIndices, col, sums, shift, mask);
      else
        storeTile(row0, col, sums, shift, mask);
    }
  };
  std::optional<int64_t> n = getConstantIntValue(colsN);
  if (n && *n % lanes == 0) {
    epilogue(/*masked=*/false);
    return;
  }
  Value inside = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule,
      mul(add(nb0, index(vectors)), index(lanes)), colsN);
  scf::IfOp::create(
      b, loc, inside,
      [&](OpBuilder &nested, Location) {
        at(nested, [&] {
          epilogue(/*masked=*/false);
          scf::YieldOp::create(b, loc);
        });
      },
      [&](OpBuilder &nested, Location) {
        at(nested, [&] {
          epilogue(/*masked=*/true);
          scf::YieldOp::create(b, loc);
        });
      });
}

/// C[row0 + r, col ...] += sums[r] (- shift), masked by `mask` when given.
void Emitter::storeTile(Value row0, Value col, ArrayRef<Value> sums,
                        Value shift, Value mask) {
  Value zeroAcc = arith::ConstantOp::create(
      b, loc, accType, DenseElementsAttr::get(accType, b.getI32IntegerAttr(0)));
  for (auto [r, acc] : llvm::enumerate(sums)) {
    SmallVector<Value> indices;
    for (Value iv : batch)
      indices.push_back(iv);
    indices.push_back(add(row0, index(r)));
    indices.push_back(col);
    Value old =
        mask ? vector::MaskedLoadOp::create(b, loc, accType, m.c, indices,
                                            mask, zeroAcc)
                   .getResult()
             : vector::LoadOp::create(b, loc, accType, m.c, indices)
                   .getResult();
    Value sum = add(old, acc);
    if (shift)
      sum = arith::SubIOp::create(b, loc, sum, shift);
    if (mask)
      vector::MaskedStoreOp::create(b, loc, m.c, indices, mask, sum);
    else
      vector::StoreOp::create(b, loc, sum, m.c, indices);
  }
}

/// The consumer's indices of C's row `row`: the row itself, or split over
/// the expand_shape's row dims (row-major, their sizes static but the first).
SmallVector<Value> Emitter::consumerRowIndices(Value row) {
  if (!consumer->expand)
    return {row};
  ArrayRef<int64_t> shape = consumer->expand.getResultType().getShape();
  ReassociationIndices group = consumer->expand.getReassociationIndices()[0];
  SmallVector<Value> indices(group.size());
  Value rest = row;
  for (int64_t i = group.size() - 1; i > 0; --i) {
    Value size = index(shape[group[i]]);
    indices[i] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  indices[0] = rest;
  return indices;
}

/// The consumer's body on the tiles: for each row, C's sums (less the
/// correction) in place of C's element, the other inputs loaded along the
/// columns (or broadcast), the body's scalar ops on vectors of `lanes`, the
/// result stored to the consumer's output (masked by `mask` when given).
/// C itself is never read (it held the fill's zeros) nor written.
void Emitter::storeConsumerTile(ArrayRef<SmallVector<Value>> rowIndices,
                                Value col, ArrayRef<Value> sums, Value shift,
                                Value mask) {
  linalg::GenericOp op = consumer->op;
  Block &body = op.getRegion().front();
  int64_t loops = op.getNumLoops();
  auto vectorOf = [&](Type t) { return VectorType::get({lanes}, t); };
  auto splat = [&](Value scalar) -> Value {
    Attribute value;
    if (matchPattern(scalar, m_Constant(&value))) {
      auto type = vectorOf(scalar.getType());
      return arith::ConstantOp::create(
          b, loc, type, DenseElementsAttr::get(type, value));
    }
    return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()),
                                       scalar);
  };
  for (auto [r, acc] : llvm::enumerate(sums)) {
    auto indicesOf = [&](AffineMap map) {
      SmallVector<Value> indices;
      for (AffineExpr e : map.getResults()) {
        auto d = dyn_cast<AffineDimExpr>(e);
        if (!d)
          indices.push_back(index(0));
        else if (d.getPosition() == loops - 1)
          indices.push_back(col);
        else
          indices.push_back(rowIndices[r][d.getPosition()]);
      }
      return indices;
    };
    IRMapping mapping;
    Value sum = shift ? arith::SubIOp::create(b, loc, acc, shift).getResult()
                      : acc;
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = body.getArgument(input->getOperandNumber());
      if (input->getOperandNumber() == consumer->cInput) {
        mapping.map(arg, sum);
        continue;
      }
      AffineMap map = op.getMatchingIndexingMap(input);
      SmallVector<Value> indices = indicesOf(map);
      bool alongColumns =
          map.getNumResults() > 0 &&
          isDim(map.getResults().back(), loops - 1);
      Value value;
      if (!alongColumns) {
        value = splat(memref::LoadOp::create(b, loc, input->get(), indices));
      } else if (mask) {
        Value zeros = arith::ConstantOp::create(
            b, loc, vectorOf(arg.getType()),
            DenseElementsAttr::get(vectorOf(arg.getType()),
                                   b.getZeroAttr(arg.getType())));
        value = vector::MaskedLoadOp::create(b, loc, vectorOf(arg.getType()),
                                             input->get(), indices, mask,
                                             zeros);
      } else {
        value = vector::LoadOp::create(b, loc, vectorOf(arg.getType()),
                                       input->get(), indices);
      }
      mapping.map(arg, value);
    }
    for (Operation &inner : body.without_terminator()) {
      if (matchPattern(inner.getResult(0), m_Constant())) {
        mapping.map(inner.getResult(0), splat(inner.getResult(0)));
        continue;
      }
      SmallVector<Value> operands;
      for (Value v : inner.getOperands())
        operands.push_back(mapping.contains(v) ? mapping.lookup(v) : splat(v));
      OperationState state(loc, inner.getName());
      state.addOperands(operands);
      state.addTypes(vectorOf(inner.getResult(0).getType()));
      state.addAttributes(inner.getAttrs());
      mapping.map(inner.getResult(0), b.create(state)->getResult(0));
    }
    Value result = mapping.lookup(body.getTerminator()->getOperand(0));
    Value out = op.getDpsInitOperand(0)->get();
    SmallVector<Value> indices =
        indicesOf(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
    if (mask)
      vector::MaskedStoreOp::create(b, loc, out, indices, mask, result);
    else
      vector::StoreOp::create(b, loc, result, out, indices);
  }
}

/// The consumer, C's fill and its expand_shape, once the kernel computed
/// them; C too when it was a buffer of its own (an alloc freed after).
void Emitter::eraseConsumer() {
  consumer->op.erase();
  if (consumer->expand)
    consumer->expand.erase();
  consumer->fill.erase();
  if (auto alloc = m.c.getDefiningOp<memref::AllocOp>()) {
    if (llvm::all_of(alloc->getUsers(),
                     [](Operation *u) { return isa<memref::DeallocOp>(u); })) {
      for (Operation *u : llvm::make_early_inc_range(alloc->getUsers()))
        u->erase();
      alloc.erase();
    }
  }
}

/// A's rows (of the current batch element) widened to i16 by A's sign into
/// `widened`, 16 at a time, zero past K: the vpmaddwd kernel then broadcasts
/// two of them from memory per row and step instead of loading two bytes,
/// moving them to a vector, extending and broadcasting them (two shuffles
/// per row and step, on the pipes vpmaddwd's sums are added on).
void Emitter::widenA() {
  constexpr int64_t chunk = 16;
  auto bytesType = VectorType::get({chunk}, i8);
  auto wideType = VectorType::get({chunk}, elementType);
  Value c0 = index(0), c1 = index(1);
  // Columns in whole chunks, then the chunk that ends past K.
  Value wholeCols = mul(arith::DivUIOp::create(b, loc, depthK, index(chunk)),
                        index(chunk));
  auto widen = [&](Value bytes) -> Value {
    return m.aUnsigned
               ? arith::ExtUIOp::create(b, loc, wideType, bytes).getResult()
               : arith::ExtSIOp::create(b, loc, wideType, bytes).getResult();
  };
  scf::ForOp::create(
      b, loc, c0, rowsM, c1, ValueRange{},
      [&](OpBuilder &nested, Location, Value r, ValueRange) {
        at(nested, [&] {
          scf::ForOp::create(
              b, loc, c0, wholeCols, index(chunk), ValueRange{},
              [&](OpBuilder &inner, Location, Value c, ValueRange) {
                at(inner, [&] {
                  Value bytes = vector::LoadOp::create(
                      b, loc, bytesType, m.a, operandIndices(m.aMap, r, c));
                  vector::StoreOp::create(b, loc, widen(bytes), widened,
                                          ValueRange{r, c});
                  scf::YieldOp::create(b, loc);
                });
              });
          Value left = arith::SubIOp::create(b, loc, depthK, wholeCols);
          Value hasTail = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ne, left, c0);
          scf::IfOp::create(b, loc, hasTail, [&](OpBuilder &then, Location) {
            at(then, [&] {
              Value mask = vector::CreateMaskOp::create(
                  b, loc, VectorType::get({chunk}, b.getI1Type()),
                  ValueRange{left});
              Value zeros = arith::ConstantOp::create(
                  b, loc, bytesType,
                  DenseElementsAttr::get(bytesType, b.getI8IntegerAttr(0)));
              Value bytes = vector::MaskedLoadOp::create(
                  b, loc, bytesType, m.a,
                  operandIndices(m.aMap, r, wholeCols), mask, zeros);
              vector::StoreOp::create(b, loc, widen(bytes), widened,
                                      ValueRange{r, wholeCols});
              scf::YieldOp::create(b, loc);
            });
          });
          scf::YieldOp::create(b, loc);
        });
      });
}

/// Runs `body` with the emitter's builder inserting where `nested` does (in
/// the region an scf builder callback is filling).
void Emitter::at(OpBuilder &nested, function_ref<void()> body) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(nested.getInsertionBlock(),
                      nested.getInsertionPoint());
  body();
}

/// `body(start, width)` where [start, start + width) ends at or before
/// `bound`, else `body(i, 1)` for each i in [start, bound): the edges of the
/// register tile.
void Emitter::fullOrEach(Value start, int64_t width, Value bound,
                         function_ref<void(Value, int64_t)> body) {
  Value full = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                     add(start, index(width)), bound);
  scf::IfOp::create(
      b, loc, full,
      [&](OpBuilder &nested, Location) {
        at(nested, [&] {
          body(start, width);
          scf::YieldOp::create(b, loc);
        });
      },
      [&](OpBuilder &nested, Location) {
        at(nested, [&] {
          scf::ForOp::create(b, loc, start, bound, index(1), ValueRange{},
                             [&](OpBuilder &inner, Location, Value i, ValueRange) {
                               at(inner, [&] {
                                 body(i, 1);
                                 scf::YieldOp::create(b, loc);
                               });
                             });
          scf::YieldOp::create(b, loc);
        });
      });
}

/// The tile at (row0, nb0): tile.rows x tile.vectors, one row / one panel at
/// a time at the bottom and right edges.
void Emitter::emitColumns(Value row0, Value nb0) {
  fullOrEach(nb0, tile.vectors, panels, [&](Value nb, int64_t vectors) {
    fullOrEach(row0, tile.rows, rowsM, [&](Value row, int64_t rows) {
      emitTile(row, nb, rows, vectors);
    });
  });
}

/// One batch element: the (parallel) loops over column groups and row tiles.
void Emitter::emitBatch() {
  if (!packAtCompileTimeDone && bVariesWithBatch())
    packAtRunTime();
  if (widened)
    widenA();
  Value groups = ceilDiv(panels, tile.vectors);
  Value rowTiles = ceilDiv(rowsM, tile.rows);

  // Static estimates: parallel where the product is large; columns outside
  // where there are enough groups for the threads.
  auto constant = [](Value v) -> std::optional<int64_t> {
    APInt value;
    if (matchPattern(v, m_ConstantInt(&value)))
      return value.getSExtValue();
    return std::nullopt;
  };
  int64_t mEstimate = constant(rowsM).value_or(64);
  int64_t nEstimate = constant(colsN).value_or(64);
  int64_t kEstimate = constant(depthK).value_or(64);
  int64_t groupEstimate = constant(groups).value_or(1);
  bool parallel = minParallelWork >= 0 &&
                  mEstimate * nEstimate * kEstimate >= minParallelWork;
  bool columnsOutside = groupEstimate >= 2 * threads;

  Value outerCount = columnsOutside ? groups : rowTiles;
  Value innerCount = columnsOutside ? rowTiles : groups;
  auto body = [&](Value outer, Value inner) {
    Value g = columnsOutside ? outer : inner;
    Value t = columnsOutside ? inner : outer;
    emitColumns(mul(t, index(tile.rows)), mul(g, index(tile.vectors)));
  };
  Value c0 = index(0), c1 = index(1);
  if (parallel) {
    scf::ParallelOp::create(
        b, loc, ValueRange{c0, c0}, ValueRange{outerCount, innerCount},
        ValueRange{c1, c1},
        [&](OpBuilder &nested, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          body(ivs[0], ivs[1]);
        });
    return;
  }
  scf::ForOp::create(
      b, loc, c0, outerCount, c1, ValueRange{},
      [&](OpBuilder &nested, Location, Value outer, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        scf::ForOp::create(
            b, loc, c0, innerCount, c1, ValueRange{},
            [&](OpBuilder &inner, Location, Value iv, ValueRange) {
              OpBuilder::InsertionGuard guard2(b);
              b.setInsertionPoint(inner.getInsertionBlock(),
                                  inner.getInsertionPoint());
              body(outer, iv);
              scf::YieldOp::create(b, loc);
            });
        scf::YieldOp::create(b, loc);
      });
}

void Emitter::emit(ModuleOp module) {
  if (consumer) {
    for (Operation *op : consumer->hoisted) {
      for (Value v : op->getOperands())
        hoist(v, m.op);
      op->walk([&](Operation *inner) {
        if (inner != op)
          for (Value v : inner->getOperands())
            if (!op->isAncestor(v.getParentBlock()->getParentOp()))
              hoist(v, m.op);
      });
      op->moveBefore(m.op);
    }
    hoist(consumer->op.getDpsInitOperand(0)->get(), m.op);
    for (OpOperand *input : consumer->op.getDpsInputOperands())
      if (input->getOperandNumber() != consumer->cInput)
        hoist(input->get(), m.op);
  }
  int64_t cRank = m.batchRank + 2;
  int64_t aRank = m.aMap.getNumResults();
  rowsM = dim(m.c, cRank - 2);
  colsN = dim(m.c, cRank - 1);
  depthK = dim(m.a, aRank - 1);
  panels = ceilDiv(colsN, lanes);
  groups = ceilDiv(depthK, group);
  fullGroups = arith::DivUIOp::create(b, loc, depthK, index(group));

  packAtCompileTimeDone = packAtCompileTime(module);
  if (!packAtCompileTimeDone) {
    packed = memref::AllocOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic,
                                 group * lanes},
                                elementType),
        ValueRange{panels, groups}, b.getI64IntegerAttr(64));
    if (!m.aUnsigned && dot.isVNNI())
      correction = memref::AllocOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, i32),
          ValueRange{mul(panels, index(lanes))}, b.getI64IntegerAttr(64));
    ownsPacked = true;
    if (!bVariesWithBatch())
      packAtRunTime();
  }
  if (!dot.isVNNI())
    widened = memref::AllocOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                        elementType),
        ValueRange{rowsM, mul(ceilDiv(depthK, 16), index(16))},
        b.getI64IntegerAttr(64));

  // Batch loops, outermost, sequential.
  std::function<void(int64_t)> nest = [&](int64_t d) {
    if (d == m.batchRank) {
      emitBatch();
      return;
    }
    scf::ForOp::create(
        b, loc, index(0), dim(m.c, d), index(1), ValueRange{},
        [&](OpBuilder &nested, Location, Value iv, ValueRange) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          batch.push_back(iv);
          nest(d + 1);
          batch.pop_back();
          scf::YieldOp::create(b, loc);
        });
  };
  nest(0);

  if (widened)
    memref::DeallocOp::create(b, loc, widened);
  if (ownsPacked) {
    memref::DeallocOp::create(b, loc, packed);
    if (correction)
      memref::DeallocOp::create(b, loc, correction);
  }
  m.op.erase();
  if (consumer)
    eraseConsumer();
  // B's get_global (and casts of it), when nothing else reads them.
  Value source = m.b;
  while (Operation *def = source.getDefiningOp()) {
    if (!def->use_empty() || !isa<memref::CastOp, memref::GetGlobalOp>(def))
      break;
    source = isa<memref::CastOp>(def) ? def->getOperand(0) : Value();
    def->erase();
    if (!source)
      break;
  }
}

struct DLIntegerMatmul
    : dl::impl::DLIntegerMatmulBase<DLIntegerMatmul> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    dl::TargetInfo target = dl::TargetInfo::of(module);
    DotProducts dots = dotProductsOf(target);
    if (!dots.vnni && !dots.widening)
      return;
    int64_t threads = std::max<int64_t>(1, target.getThreads());
    // The register tile: accumulators, `vectors` registers of B's panels,
    // one of A's broadcast group, and one for vpmaddwd's sums.
    auto tileFor = [&](const DotProduct &dot) {
      int64_t registers = std::max<int64_t>(8, target.getVectorRegisters());
      if (!dot.accumulates) {
        // vpmaddwd: R x V accumulators, V registers of B's panels, A's
        // broadcast and the products' register, the most accumulators
        // (each step loads R + V registers for R x V products; ties go to
        // fewer loads). AVX2's 16 registers: 6 x 2 (3 x 3 leaves 9).
        dl::RegisterTileShape best{1, 1};
        for (int64_t v = 1; v <= 4; ++v)
          for (int64_t r = 1; r <= 8; ++r) {
            if (r * v + v + 2 > registers)
              break;
            if (r * v > best.rows * best.vectors ||
                (r * v == best.rows * best.vectors &&
                 r + v < best.rows + best.vectors))
              best = {r, v};
          }
        return best;
      }
      dl::RegisterTileShape tile = dl::chooseRegisterTile(target);
      tile.vectors = std::max<int64_t>(1, std::min<int64_t>(tile.vectors, 4));
      tile.rows = std::max<int64_t>(1, tile.rows);
      while (tile.rows > 1 &&
             tile.rows * tile.vectors + tile.vectors + 1 > registers)
        --tile.rows;
      return tile;
    };
    SmallVector<IntegerMatmul> matches;
    module.walk([&](linalg::GenericOp op) {
      if (std::optional<IntegerMatmul> m = matchIntegerMatmul(op))
        matches.push_back(*m);
    });
    llvm::SetVector<Operation *> weights;
    for (IntegerMatmul &m : matches) {
      // vpdpbusd where B is signed; the widening product otherwise.
      const std::optional<DotProduct> &dot =
          dots.vnni && !m.bUnsigned ? dots.vnni : dots.widening;
      if (!dot)
        continue;
      memref::GlobalOp global;
      if (constantBytes(m.b, module, global))
        weights.insert(global);
      std::optional<Consumer> consumer =
          epilogue ? matchConsumer(m) : std::nullopt;
      // How many elementwise nests run inside the kernels' tiles, for
      // reports (dl-affine-register-tile adds its own).
      if (auto func = m.op->getParentOfType<FunctionOpInterface>();
          func && consumer) {
        auto count = func->getAttrOfType<IntegerAttr>("dl.fused_epilogues");
        func->setAttr("dl.fused_epilogues",
                      IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                       (count ? count.getInt() : 0) + 1));
      }
      Emitter(m, *dot, tileFor(*dot),
              parallel ? int64_t(minParallelWork) : -1, threads, consumer)
          .emit(module);
    }
    // Weights now read only through their packed copies are dropped.
    for (Operation *global : weights)
      if (SymbolTable::symbolKnownUseEmpty(global, module))
        global->erase();
  }
};

} // namespace
