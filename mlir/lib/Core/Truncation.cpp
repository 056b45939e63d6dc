//===- Truncation.cpp - say when a text the parser refused was cut short --===//
//
// A file cut off in the middle (a dump copied while it was written, a
// region pasted in part) fails to parse at its very end. Saying so, and in
// which function, tells the user more than the parser's "expected '}'".
//
//===----------------------------------------------------------------------===//

#include "CoreImpl.h"

#include "llvm/ADT/StringExtras.h"

using namespace fxmlir;

std::optional<std::string> fxmlir::describeTruncation(llvm::StringRef text,
                                                      size_t errorOffset) {
  if (errorOffset > text.size())
    return std::nullopt;
  // At most one token after the error: the parser ran out of text.
  llvm::StringRef rest = text.drop_front(errorOffset).trim();
  if (rest.find_first_of(" \t\n") != llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef head = "func.func ";
  size_t at = text.take_front(errorOffset).rfind(head);
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef header = text.drop_front(at + head.size());
  bool isRegion = header.consume_front("private ");
  if (!header.consume_front("@"))
    return std::nullopt;
  llvm::StringRef name = header.take_while(
      [](char c) { return llvm::isAlnum(c) || c == '_' || c == '.'; });
  return "truncated: the text ends in " +
         std::string(isRegion ? "JIT region" : "function") + " @" + name.str();
}
