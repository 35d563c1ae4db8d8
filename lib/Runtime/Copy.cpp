//===- Copy.cpp - memrefCopy for compiled code, without LLVM ---------------===//
//
// The LLVM lowering of memref.copy between buffers that are not both
// contiguous calls `memrefCopy(elementSize, source, destination)` with two
// unranked memref descriptors. MLIR defines it in libmlir_c_runner_utils,
// which links libLLVM.so and libMLIR.so; the ExecutionEngine loads the shared
// libraries it is given with global visibility, which put LLVM 22's symbols
// in the process's global scope, and the next library carrying an LLVM of its
// own (triton's libtriton.so, which `import triton` loads: torch.compile and
// torch.onnx's dynamo exporter do) bound its LLVM calls to ours and crashed
// in its static initializers. So dlc's runtime defines the copy itself, with
// MLIR's signature and descriptor layout, and no MLIR library is loaded
// globally.
//
// Ours: upstream's runtime library is fine as code, but unusable with global
// visibility next to another LLVM.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

/// What an unranked memref passes: its rank and a pointer to the ranked
/// descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

struct View {
  char *base;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};

View view(const UnrankedMemRef &memref) {
  auto *pointers = static_cast<char **>(memref.descriptor);
  auto *fields = static_cast<const int64_t *>(memref.descriptor);
  return {pointers[1], fields[2], fields + 3, fields + 3 + memref.rank};
}

} // namespace

extern "C" void memrefCopy(int64_t elementSize, UnrankedMemRef *sourceArg,
                           UnrankedMemRef *destinationArg) {
  int64_t rank = sourceArg->rank;
  View source = view(*sourceArg), destination = view(*destinationArg);
  char *from = source.base + source.offset * elementSize;
  char *to = destination.base + destination.offset * elementSize;
  if (rank == 0) {
    std::memcpy(to, from, elementSize);
    return;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (source.sizes[d] == 0)
      return;
  // Innermost runs of contiguous elements are copied at once.
  int64_t run = 1, expected = 1, inner = rank;
  while (inner > 0 && source.strides[inner - 1] == expected &&
         destination.strides[inner - 1] == expected) {
    run *= source.sizes[inner - 1];
    expected *= source.sizes[inner - 1];
    --inner;
  }
  std::vector<int64_t> index(inner, 0);
  int64_t fromPos = 0, toPos = 0;
  while (true) {
    std::memcpy(to + toPos * elementSize, from + fromPos * elementSize,
                run * elementSize);
    int64_t d = inner - 1;
    for (; d >= 0; --d) {
      if (++index[d] < source.sizes[d]) {
        fromPos += source.strides[d];
        toPos += destination.strides[d];
        break;
      }
      fromPos -= source.strides[d] * (source.sizes[d] - 1);
      toPos -= destination.strides[d] * (source.sizes[d] - 1);
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
