//===- Strategy.h - how each dl op is compiled -----------------*- C++ -*-===//
//
// The code-generation strategy of a dl op (#dl.strategy), chosen from the
// target in ONE place: dl-select-strategies records it, dl-explain reports
// it, and convert-dl-to-linalg asks the same function for an op that carries
// none, so there is no second policy.
//
//===----------------------------------------------------------------------===//
#ifndef DL_TRANSFORMS_STRATEGY_H
#define DL_TRANSFORMS_STRATEGY_H

#include "dl/IR/DLAttrs.h"
#include "dl/Target/Target.h"

#include <optional>
#include <string>

namespace mlir::dl {

/// A strategy and why it was chosen.
struct StrategyChoice {
  StrategyAttr strategy;
  std::string reason;
};

/// Options of the choice that are not facts of the target.
struct StrategyOptions {
  /// Largest filter (bytes) of an NHWC f32 convolution run as a direct
  /// convolution; 0: the target's L2-resident size; -1: never (and f16/bf16
  /// convolutions are im2col + GEMM too: the GPU pipeline's setting).
  int64_t maxDirectFilterBytes = 0;
};

/// The strategy of `op` on `target`; none for ops without one (elementwise
/// ops, shapes).
std::optional<StrategyChoice> chooseStrategy(Operation *op,
                                             const TargetInfo &target,
                                             const StrategyOptions &options);

/// The strategy `op` carries (written in the IR, or recorded by
/// dl-select-strategies), else chooseStrategy's.
std::optional<StrategyChoice> strategyOf(Operation *op, const TargetInfo &target,
                                         const StrategyOptions &options);

class Conv2dOp;

/// Why the convolution `conv` cannot be rewritten into dense f32 products
/// over its filter (dl-winograd, dl-pack-weights' im2col), or "": a
/// recorded strategy, a layout other than NHWC, groups, dynamic shapes,
/// element types other than f32.
std::string denseConvolutionRefusal(Conv2dOp conv);

} // namespace mlir::dl

#endif // DL_TRANSFORMS_STRATEGY_H
