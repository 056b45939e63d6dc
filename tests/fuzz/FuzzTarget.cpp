//===- FuzzTarget.cpp - parse, transform and export arbitrary bytes -------===//
//
// One input through everything the core does with untrusted text: parse and
// verify, the default pipeline, JSON and dot export. Any fxmlir::Error is a
// correct answer; a crash or a hang is a bug. The signature is libFuzzer's,
// so the same target links with -fsanitize=fuzzer when built with clang; as
// libFuzzer reads it, -1 marks input the parser rejected (not worth keeping).
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Core/Core.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context now and then keeps the uniqued types and attributes of
  // garbage inputs from accumulating over a long run.
  static std::unique_ptr<fxmlir::Context> context;
  static unsigned uses = 0;
  if (!context || ++uses % 1000 == 0)
    context = std::make_unique<fxmlir::Context>();
  std::optional<fxmlir::Module> module;
  try {
    module = fxmlir::Module::parse(
        *context, std::string(reinterpret_cast<const char *>(data), size),
        "fuzz.mlir");
  } catch (const fxmlir::Error &) {
    return -1; // Rejected with diagnostics: the usual outcome for bytes.
  }
  try {
    // The forward stage's pipeline holds every default pass.
    module->clone().explainFusions("fxmlir-forward");
    module->runPipeline("fxmlir-forward");
    module->toJson();
  } catch (const fxmlir::Error &) {
    // A pass or an export refusing valid IR with a message is correct too.
  }
  return 0;
}
