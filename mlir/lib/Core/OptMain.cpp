//===- OptMain.cpp - the fxmlir-opt driver --------------------------------===//

#include "fxmlir/Core/Core.h"
#include "fxmlir/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int fxmlir::optMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fxmlir optimizer driver\n", registry));
}
