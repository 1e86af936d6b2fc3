//===- Npy.h - Reading NumPy .npy files --------------------------*- C++
//-*-===//
//
// Part of EPL-MLIR.
//
//===----------------------------------------------------------------------===//
//
// NumPy's own format for one array (`numpy.save`): a magic string, a
// version, a header that is a Python dict literal ('descr', 'fortran_order',
// 'shape'), then the elements. Datasets come this way as often as in
// safetensors files.
//
//===----------------------------------------------------------------------===//

#ifndef EPL_SUPPORT_NPY_H
#define EPL_SUPPORT_NPY_H

#include "epl/Support/Safetensors.h"

namespace mlir::epl {

/// The array in the .npy file `path`, named `name`: little-endian (or
/// byte-order-free) f64, f32, f16, i64, i32, i16, i8, u8 or bool elements
/// in C order, format versions 1 to 3. Anything else (Fortran order,
/// big-endian or object elements, a truncated file) is an error naming the
/// file.
llvm::Expected<HostTensor> readNpy(llvm::StringRef path, llvm::StringRef name);

} // namespace mlir::epl

#endif // EPL_SUPPORT_NPY_H
