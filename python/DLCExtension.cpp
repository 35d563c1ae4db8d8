//===- DLCExtension.cpp - site initializer of dlc's MLIR bindings ---------===//
//
// Loaded by dlc.mlir._mlir_libs at import (as `_site_initialize_0`): every
// Context created through dlc.mlir knows the dl dialect, and the pass registry
// holds dlc's passes and pipelines, so Python builds and runs the same
// pipelines as dl-opt.
//
// It also holds the hot part of calling JIT-compiled code (call_packed):
// filling the memref descriptors of numpy arguments through the buffer
// protocol and calling the entry point without the GIL. In Python (ctypes
// field stores, __array_interface__) that took about 14 us per call of the
// 784-128-32-10 MLP, whose code runs in 8.
//
//===----------------------------------------------------------------------===//

#include "dl-c/DL.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <cstdint>
#include <vector>

namespace nb = nanobind;

namespace {

/// Fills descriptor i (allocated, aligned, offset, sizes[rank],
/// strides[rank], all 64-bit) from the buffer of arrays[i], then runs
/// entry(packed) without the GIL. Returns the arguments' data addresses, or
/// None (nothing called) when an argument exports no strided buffer of the
/// expected rank (the caller reports it).
nb::object callPacked(uintptr_t entry, uintptr_t packed,
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
  if (ok) {
    {
      nb::gil_scoped_release release;
      reinterpret_cast<void (*)(void **)>(entry)(
          reinterpret_cast<void **>(packed));
    }
    nb::list addresses;
    for (size_t i = 0; i < count; ++i)
      addresses.append(nb::int_(reinterpret_cast<uintptr_t>(views[i].buf)));
    result = addresses;
  }
  for (size_t i = 0; i < acquired; ++i)
    PyBuffer_Release(&views[i]);
  return result;
}

} // namespace

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "dlc: registers the dl dialect, dlc passes and pipelines";
  m.def("register_dialects", [](MlirDialectRegistry registry) {
    mlirDialectHandleInsertDialect(mlirGetDialectHandle__dl__(), registry);
  });
  dlcRegisterPasses();
  m.def("call_packed", &callPacked, nb::arg("entry"), nb::arg("packed"),
        nb::arg("descriptors"), nb::arg("ranks"), nb::arg("arrays"),
        "Fills the memref descriptors from the arrays' buffers and calls "
        "entry(packed) without the GIL; the arguments' addresses, or None "
        "if an argument has no strided buffer of its rank (nothing called).");
}
