//===- Diagnostics.h - diagnostics as fxmlir::Error ------------*- C++ -*-===//

#ifndef FXMLIR_LIB_SUPPORT_DIAGNOSTICS_H
#define FXMLIR_LIB_SUPPORT_DIAGNOSTICS_H

#include "fxmlir/Core/Core.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace fxmlir {
/// Collects every diagnostic emitted while it lives as "loc: severity: msg"
/// lines, notes included, so they can travel in an Error.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diag) {
          append(diag);
          for (mlir::Diagnostic &note : diag.getNotes())
            append(note);
          return mlir::success();
        }) {}

  /// Throws Error with `what` followed by the collected diagnostics.
  [[noreturn]] void fail(const std::string &what) {
    throw Error(messages.empty() ? what : what + ":\n" + messages);
  }

private:
  void append(mlir::Diagnostic &diag) {
    llvm::raw_string_ostream os(messages);
    os << diag.getLocation() << ": ";
    switch (diag.getSeverity()) {
    case mlir::DiagnosticSeverity::Error:
      os << "error: ";
      break;
    case mlir::DiagnosticSeverity::Warning:
      os << "warning: ";
      break;
    case mlir::DiagnosticSeverity::Note:
      os << "note: ";
      break;
    case mlir::DiagnosticSeverity::Remark:
      os << "remark: ";
      break;
    }
    os << diag << "\n";
  }

  std::string messages;
  mlir::ScopedDiagnosticHandler handler;
};
} // namespace fxmlir

#endif // FXMLIR_LIB_SUPPORT_DIAGNOSTICS_H
