//===- RegisterTiledMatmul.h - dl-gpu-shared-matmul's large kernel -*- C++ -*-===//

#ifndef DL_CODEGEN_GPU_REGISTERTILEDMATMUL_H
#define DL_CODEGEN_GPU_REGISTERTILEDMATMUL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::dl {

/// Whether a float matmul on memrefs (batched: a linalg.batch_matmul) is a
/// float32 one whose M and N are large enough (at least 64, or dynamic) for
/// the 128 x 128 tiles of buildRegisterTiledMatmul.
bool fillsRegisterTiles(linalg::LinalgOp op, bool batched);

/// Replaces `op` (C += A * B, one float type, default indexing maps) by the
/// register-tiled kernel (see RegisterTiledMatmul.cpp), K split so that
/// there are about `minBlocks` blocks where the tiles of C are fewer.
void buildRegisterTiledMatmul(linalg::LinalgOp op, bool batched, int64_t minBlocks);

} // namespace mlir::dl

#endif // DL_CODEGEN_GPU_REGISTERTILEDMATMUL_H
