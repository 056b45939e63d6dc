//===- OptMain.cpp - the fxmlir-opt driver --------------------------------===//
//
// mlir-opt's driver, with one step added: input nested deeper than
// kMaxNestingDepth is refused with a diagnostic before the parser sees it.
//
//===----------------------------------------------------------------------===//

#include "CoreImpl.h"

#include "fxmlir/Registration/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int fxmlir::optMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "fxmlir optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (std::optional<std::string> tooDeep = findExcessiveNesting(
          input->getBuffer(), input->getBufferIdentifier())) {
    llvm::errs() << *tooDeep << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
