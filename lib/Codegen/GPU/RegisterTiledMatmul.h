//===- RegisterTiledMatmul.h - dl-gpu-shared-matmul's large kernel -*- C++ -*-===//

#ifndef DL_CODEGEN_GPU_REGISTERTILEDMATMUL_H
#define DL_CODEGEN_GPU_REGISTERTILEDMATMUL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::dl {

/// Whether a matmul on memrefs (batched: a linalg.batch_matmul) has A and B
/// of one type among float32, float16 and bfloat16, C of theirs or float32,
/// and M and N large enough (at least 64, or dynamic) for the 128 x 128
/// tiles of buildRegisterTiledMatmul.
bool fillsRegisterTiles(linalg::LinalgOp op, bool batched);

/// Replaces `op` (C += A * B, types as fillsRegisterTiles says, default
/// indexing maps) by the
/// register-tiled kernel (see RegisterTiledMatmul.cpp), K split so that
/// there are about `minBlocks` blocks where the tiles of C are fewer.
void buildRegisterTiledMatmul(linalg::LinalgOp op, bool batched, int64_t minBlocks);

} // namespace mlir::dl

#endif // DL_CODEGEN_GPU_REGISTERTILEDMATMUL_H
