//===- NestingDepth.cpp - refuse input nested too deep to parse safely ----===//
//
// MLIR's recursive-descent parser uses stack for every nested attribute,
// type and region, so a few kilobytes of `[[[[...` overflow any thread's
// stack; so does a run of unary minus signs in an affine expression
// (`(d0) -> (- - - ... d0)`: each `-` recurses). This scan runs before the
// parser and bounds the nesting of every bracket kind and of the minus
// signs pending before an operand together. It skips string literals and
// comments, and reads the `>` of `->` as an arrow; it may overcount, never
// undercount.
//
//===----------------------------------------------------------------------===//

#include "CoreImpl.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <cctype>

using namespace fxmlir;

static std::string tooDeep(llvm::StringRef bufferName, unsigned line,
                           size_t column) {
  return (bufferName + ":" + llvm::Twine(line) + ":" + llvm::Twine(column) +
          ": error: input nests brackets, braces, parentheses, angle "
          "brackets and unary minus signs more than " +
          llvm::Twine(kMaxNestingDepth) +
          " levels deep; fxmlir refuses it to keep the parser within the "
          "stack")
      .str();
}

std::optional<std::string>
fxmlir::findExcessiveNesting(llvm::StringRef text, llvm::StringRef bufferName) {
  // `depth` counts the open brackets and the minus signs pending at each
  // enclosing level; `minuses` those pending at this level, which the next
  // operand (any other token) or the close of a bracket they precede ends.
  unsigned depth = 0, minuses = 0, line = 1;
  llvm::SmallVector<unsigned> enclosing; // depth outside each open bracket
  size_t lineStart = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"': // A string literal: skip to its closing quote.
      minuses = 0;
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      if (i < e && text[i] == '\n')
        --i; // Unterminated: let the newline count; the parser reports it.
      break;
    case '/': // A comment runs to the end of the line.
      minuses = 0;
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '-':
      if (depth + ++minuses > kMaxNestingDepth)
        return tooDeep(bufferName, line, i - lineStart + 1);
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      enclosing.push_back(depth);
      depth += minuses + 1;
      minuses = 0;
      if (depth > kMaxNestingDepth)
        return tooDeep(bufferName, line, i - lineStart + 1);
      break;
    case '>':
      if (i > 0 && text[i - 1] == '-') {
        minuses = 0; // The arrow of a function type.
        break;
      }
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      // Closing what the minus signs before it negated ends them too.
      if (!enclosing.empty()) {
        depth = enclosing.pop_back_val();
      }
      minuses = 0;
      break;
    default:
      if (!std::isspace(static_cast<unsigned char>(c)))
        minuses = 0;
      break;
    }
  }
  return std::nullopt;
}
