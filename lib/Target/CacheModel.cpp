//===- CacheModel.cpp - cache sizes of the target -------------------------===//

#include "dl/Target/CacheModel.h"

#include "llvm/Support/MemoryBuffer.h"

#include <string>

using namespace mlir::dl;

namespace {

/// The trimmed contents of a small text file, or "" if it cannot be read.
std::string readText(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().trim().str();
}

/// "48K", "2048K", "1M" -> bytes; 0 if unparsable.
int64_t parseSize(const std::string &text) {
  if (text.empty())
    return 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (value <= 0)
    return 0;
  switch (*end) {
  case 'K': return value * 1024;
  case 'M': return value * 1024 * 1024;
  case 'G': return value * 1024 * 1024 * 1024;
  case '\0': return value;
  default: return 0;
  }
}

CacheSizes readHostCacheSizes() {
  CacheSizes sizes;
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::string level = readText(dir + "level");
    if (level.empty())
      break;
    std::string type = readText(dir + "type");
    int64_t size = parseSize(readText(dir + "size"));
    if (size <= 0 || type == "Instruction")
      continue;
    if (level == "1")
      sizes.l1 = size;
    else if (level == "2")
      sizes.l2 = size;
  }
  return sizes;
}

} // namespace

CacheSizes mlir::dl::hostCacheSizes() {
  static const CacheSizes sizes = readHostCacheSizes();
  return sizes;
}
