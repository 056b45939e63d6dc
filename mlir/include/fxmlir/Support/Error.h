//===- Error.h - the error every part of the core throws --------*- C++ -*-===//
//
// At the bottom of the core, so that every part, public or not, throws the
// one exception clients catch (fxmlir/Core/Core.h re-exports it).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_SUPPORT_ERROR_H
#define FXMLIR_SUPPORT_ERROR_H

#include <stdexcept>

#define FXMLIR_API __attribute__((visibility("default")))

namespace fxmlir {

/// A failure the caller can act on: malformed IR, a failed verifier, an
/// unknown pass. The message holds the diagnostics, each with its location.
class FXMLIR_API Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace fxmlir

#endif // FXMLIR_SUPPORT_ERROR_H
