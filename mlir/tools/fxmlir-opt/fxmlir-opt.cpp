//===- fxmlir-opt.cpp - mlir-opt with the fxmlir dialect and passes -------===//

#include "fxmlir/Core/Core.h"

int main(int argc, char **argv) { return fxmlir::optMain(argc, argv); }
