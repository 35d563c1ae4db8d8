//===- DLCExtension.cpp - site initializer of dlc's MLIR bindings ---------===//
//
// Loaded by dlc.mlir._mlir_libs at import (as `_site_initialize_0`): every
// Context created through dlc.mlir knows the dl dialect, and the pass registry
// holds dlc's passes and pipelines, so Python builds and runs the same
// pipelines as dl-opt.
//
// It also gives Python what it asks of the C++ side (the target description,
// the pipelines' stage and chip names: one list each, in C++), and holds the
// hot part of calling JIT-compiled code (call_packed):
// filling the memref descriptors of numpy arguments through the buffer
// protocol and calling the entry point without the GIL. In Python (ctypes
// field stores, __array_interface__) that took about 14 us per call of the
// 784-128-32-10 MLP, whose code runs in 8.
//
//===----------------------------------------------------------------------===//

#include "dl-c/DL.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

/// Fills descriptor i (allocated, aligned, offset, sizes[rank],
/// strides[rank], all 64-bit) from the buffer of arrays[i], then runs
/// invoke(entry, packed) without the GIL (invoke: libdlc_runtime's
/// dlc_call_guarded, which returns the bytes of an allocation that failed in
/// the compiled code, 0 if none did). Returns the arguments' data addresses,
/// or None (nothing called) when an argument exports no strided buffer of
/// the expected rank (the caller reports it); raises MemoryError where an
/// allocation failed.
nb::object callPacked(uintptr_t invoke, uintptr_t entry, uintptr_t packed,
                      const std::vector<uintptr_t> &descriptors,
                      const std::vector<int64_t> &ranks, nb::sequence arrays) {
  size_t count = descriptors.size();
  if (ranks.size() != count || nb::len(arrays) != count)
    throw nb::value_error("call_packed: descriptors, ranks and arrays differ "
                          "in length");
  std::vector<Py_buffer> views(count);
  size_t acquired = 0;
  bool ok = true;
  for (size_t i = 0; i < count && ok; ++i) {
    nb::object array = arrays[i];
    if (PyObject_GetBuffer(array.ptr(), &views[i], PyBUF_STRIDES) != 0) {
      PyErr_Clear();
      ok = false;
      break;
    }
    ++acquired;
    Py_buffer &view = views[i];
    if (view.ndim != ranks[i] || view.itemsize <= 0) {
      ok = false;
      break;
    }
    auto *d = reinterpret_cast<int64_t *>(descriptors[i]);
    d[0] = d[1] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(view.buf));
    d[2] = 0;
    for (int r = 0; r < view.ndim; ++r) {
      d[3 + r] = view.shape[r];
      d[3 + view.ndim + r] = view.strides[r] / view.itemsize;
    }
  }
  nb::object result = nb::none();
  int64_t failedBytes = 0;
  if (ok) {
    {
      nb::gil_scoped_release release;
      using Entry = void (*)(void **);
      failedBytes = reinterpret_cast<int64_t (*)(Entry, void **)>(invoke)(
          reinterpret_cast<Entry>(entry), reinterpret_cast<void **>(packed));
    }
    nb::list addresses;
    for (size_t i = 0; i < count; ++i)
      addresses.append(nb::int_(reinterpret_cast<uintptr_t>(views[i].buf)));
    result = addresses;
  }
  for (size_t i = 0; i < acquired; ++i)
    PyBuffer_Release(&views[i]);
  if (failedBytes) {
    char message[160];
    std::snprintf(message, sizeof(message),
                  "the compiled code could not allocate %lld bytes (%.3g "
                  "GiB); what this call allocated before is not freed",
                  static_cast<long long>(failedBytes),
                  static_cast<double>(failedBytes) / (1024.0 * 1024 * 1024));
    PyErr_SetString(PyExc_MemoryError, message);
    throw nb::python_error();
  }
  return result;
}

/// A list of the strings a C API function passes to its callback.
template <typename F>
std::vector<std::string> collectStrings(F call) {
  std::vector<std::string> out;
  call(
      [](MlirStringRef text, void *data) {
        static_cast<std::vector<std::string> *>(data)->emplace_back(
            text.data, text.length);
      },
      &out);
  return out;
}

/// The (first, second) pairs a C API function passes to its callback.
template <typename F>
std::vector<std::pair<std::string, std::string>> collectPairs(F call) {
  std::vector<std::pair<std::string, std::string>> out;
  call(
      [](MlirStringRef first, MlirStringRef second, void *data) {
        static_cast<std::vector<std::pair<std::string, std::string>> *>(data)
            ->emplace_back(std::string(first.data, first.length),
                           std::string(second.data, second.length));
      },
      &out);
  return out;
}

MlirAttribute requireTarget(MlirAttribute attribute) {
  if (!dlcAttributeIsATarget(attribute))
    throw nb::type_error("expected a #dl.target attribute");
  return attribute;
}

/// Compiles `module` (llvm dialect) to `<directory>/part<i>.o`, at most
/// `parts` of them, on `threads` threads; the GIL is released while LLVM
/// works (no MLIR object is touched then). Returns (number of parts,
/// seconds translating and splitting, seconds optimizing and compiling).
std::tuple<int, double, double> compileObjects(MlirModule module, int optLevel, int parts, int threads,
                   const std::string &directory) {
  std::string error;
  auto collect = [](MlirStringRef text, void *data) {
    static_cast<std::string *>(data)->append(text.data, text.length);
  };
  auto start = std::chrono::steady_clock::now();
  DlcObjectJob job = dlcObjectJobCreate(module, optLevel, parts, collect, &error);
  auto split = std::chrono::steady_clock::now();
  if (!job.ptr)
    throw std::runtime_error("LLVM code generation: " + error);
  int count = dlcObjectJobNumParts(job);
  bool ok;
  {
    nb::gil_scoped_release release;
    ok = dlcObjectJobRun(job, mlirStringRefCreate(directory.data(), directory.size()),
                         threads, collect, &error);
  }
  dlcObjectJobDestroy(job);
  if (!ok)
    throw std::runtime_error("LLVM code generation: " + error);
  std::chrono::duration<double> first = split - start,
                                second = std::chrono::steady_clock::now() - split;
  return {count, first.count(), second.count()};
}

} // namespace

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "dlc: registers the dl dialect, dlc passes and pipelines";
  m.def("register_dialects", [](MlirDialectRegistry registry) {
    mlirDialectHandleInsertDialect(mlirGetDialectHandle__dl__(), registry);
  });
  dlcRegisterPasses();
  m.def("call_packed", &callPacked, nb::arg("invoke"), nb::arg("entry"),
        nb::arg("packed"), nb::arg("descriptors"), nb::arg("ranks"),
        nb::arg("arrays"),
        "Fills the memref descriptors from the arrays' buffers and calls "
        "invoke(entry, packed) without the GIL; the arguments' addresses, or "
        "None if an argument has no strided buffer of its rank (nothing "
        "called). MemoryError where the code could not allocate.");

  m.def(
      "complete_target",
      [](MlirAttribute target) {
        return dlcTargetComplete(requireTarget(target));
      },
      nb::arg("target"),
      "The #dl.target `target` completed from its CPU's table or the host.");
  m.def(
      "target_fields",
      [](MlirAttribute target) {
        return collectPairs([&](DlcPairCallback callback, void *data) {
          dlcTargetFields(requireTarget(target), callback, data);
        });
      },
      nb::arg("target"), "The fields of a #dl.target: (name, text) pairs.");
  m.def(
      "target_features",
      [](MlirAttribute target) {
        return collectStrings([&](MlirStringCallback callback, void *data) {
          dlcTargetFeatures(requireTarget(target), callback, data);
        });
      },
      nb::arg("target"), "Every ISA feature a #dl.target has, sorted.");
  m.def(
      "target_register_tile",
      [](MlirAttribute target) {
        int64_t rows = 0, vectors = 0;
        dlcTargetRegisterTile(requireTarget(target), &rows, &vectors);
        return std::make_pair(rows, vectors);
      },
      nb::arg("target"),
      "(rows, vectors) of the micro-kernel's register tile on the target.");
  m.def(
      "known_cpus", [] { return collectStrings(dlcKnownCPUs); },
      "The CPUs of dlc's table (LLVM names).");
  m.def(
      "pipeline_stages",
      [](bool gpu) {
        return collectPairs([&](DlcPairCallback callback, void *data) {
          dlcPipelineStages(gpu, callback, data);
        });
      },
      nb::arg("gpu"),
      "The stages (name, description) of dl-cpu-pipeline or dl-gpu-pipeline.");
  m.def("compile_objects", &compileObjects, nb::arg("module"),
        nb::arg("opt_level"), nb::arg("parts"), nb::arg("threads"),
        nb::arg("directory"),
        "Compiles an llvm-dialect module to position-independent object files "
        "<directory>/part<i>.o, split into at most `parts` parts compiled on "
        "`threads` threads; returns (parts written, seconds translating and "
        "splitting, seconds optimizing and compiling).");
  m.def("operation_count", &dlcModuleOperationCount, nb::arg("module"),
        "The number of operations in a module, nested ones included.");
  m.def(
      "gpu_chips", [] { return collectStrings(dlcGPUChips); },
      "The NVIDIA chips dl-gpu-pipeline compiles for.");
}
