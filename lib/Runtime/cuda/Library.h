//===- Library.h - Functions of a library loaded at run time ----*- C++ -*-===//
//
// Part of EPL-MLIR.
//
// The CUDA driver, cuBLAS and NCCL are opened with dlopen when a rank first
// needs them, and their functions looked up by the names their headers give
// them. A struct per library lists its functions once (an X macro) and
// declares and looks them up with these:
//
//   struct Blas {
//     #define FUNCTIONS(X) X(cublasCreate) X(cublasSgemm)
//     FUNCTIONS(EPL_DECLARE_FUNCTION)
//     std::string error;
//     Blas() {
//       void *library = openLibrary({"libcublas.so.13"}, "cuBLAS", error);
//       const char *name = "cuBLAS";
//       if (library) { FUNCTIONS(EPL_LOOKUP_FUNCTION) }
//     }
//   };
//
//===----------------------------------------------------------------------===//

#ifndef EPL_LIB_RUNTIME_CUDA_LIBRARY_H
#define EPL_LIB_RUNTIME_CUDA_LIBRARY_H

#include <dlfcn.h>

#include <initializer_list>
#include <string>

#define EPL_STRINGIFY_(x) #x
// The versioned symbol behind a macro of the header (cuMemAlloc ->
// cuMemAlloc_v2, cublasSgemm -> cublasSgemm_v2).
#define EPL_SYMBOL(x) EPL_STRINGIFY_(x)

/// A member named like the function, of its type.
#define EPL_DECLARE_FUNCTION(f) decltype(&::f) f = nullptr;

/// Looks `f` up in `library`; the first one missing is the `error`.
#define EPL_LOOKUP_FUNCTION(f)                                                 \
  f = reinterpret_cast<decltype(f)>(dlsym(library, EPL_SYMBOL(f)));            \
  if (!f && error.empty())                                                     \
    error = std::string(name) + " has no " EPL_SYMBOL(f) " (too old)";

namespace epl::rt::cuda {

/// The first of `files` that loads, or null with `error` saying that
/// `what` is not installed (and why the first did not load).
inline void *openLibrary(std::initializer_list<const char *> files,
                         const char *what, std::string &error) {
  std::string why;
  for (const char *file : files) {
    if (void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL))
      return library;
    if (why.empty())
      if (const char *text = dlerror())
        why = text;
  }
  error = std::string("no ") + what + " (" +
          (why.empty() ? *files.begin() + std::string(" not found") : why) +
          ")";
  return nullptr;
}

} // namespace epl::rt::cuda

#endif // EPL_LIB_RUNTIME_CUDA_LIBRARY_H
