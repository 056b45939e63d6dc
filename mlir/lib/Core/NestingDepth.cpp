//===- NestingDepth.cpp - refuse input nested too deep to parse safely ----===//
//
// MLIR's recursive-descent parser uses stack for every nested attribute,
// type and region, so a few kilobytes of `[[[[...` overflow any thread's
// stack. This scan runs before the parser and bounds the nesting of every
// bracket kind together. It skips string literals and comments, and reads
// the `>` of `->` as an arrow; it may overcount, never undercount.
//
//===----------------------------------------------------------------------===//

#include "CoreImpl.h"

#include "llvm/ADT/Twine.h"

using namespace fxmlir;

std::optional<std::string>
fxmlir::findExcessiveNesting(llvm::StringRef text, llvm::StringRef bufferName) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"': // A string literal: skip to its closing quote.
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i < e && text[i] == '\n')
        --i; // Unterminated: let the newline count; the parser reports it.
      break;
    case '/': // A comment runs to the end of the line.
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > kMaxNestingDepth)
        return (bufferName + ":" + llvm::Twine(line) + ":" +
                llvm::Twine(i - lineStart + 1) +
                ": error: input nests brackets, braces, parentheses and "
                "angle brackets more than " +
                llvm::Twine(kMaxNestingDepth) +
                " levels deep; fxmlir refuses it to keep the parser within "
                "the stack")
            .str();
      break;
    case '>':
      if (i > 0 && text[i - 1] == '-')
        break; // The arrow of a function type.
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}
