//===- JsonReader.cpp - JSON text as an arena-allocated tree --------------===//

#include "JsonReader.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

#include <algorithm>

using namespace fxmlir::json;

std::optional<bool> Value::getAsBoolean() const {
  if (valueKind != Kind::Bool)
    return std::nullopt;
  return boolean;
}

std::optional<int64_t> Value::getAsInteger() const {
  int64_t number;
  // getAsInteger fails on a fraction, an exponent and an overflow alike.
  if (valueKind != Kind::Number || text.getAsInteger(10, number))
    return std::nullopt;
  return number;
}

std::optional<llvm::StringRef> Value::getAsString() const {
  if (valueKind != Kind::String)
    return std::nullopt;
  return text;
}

const Value *Value::get(llvm::StringRef key) const {
  if (valueKind != Kind::Object)
    return nullptr;
  // Objects here have a handful of members: a scan beats hashing.
  for (const Member &member : members)
    if (member.key == key)
      return &member.value;
  return nullptr;
}

std::optional<llvm::StringRef> Value::getString(llvm::StringRef key) const {
  const Value *value = get(key);
  return value ? value->getAsString() : std::nullopt;
}

const Array *Value::getArray(llvm::StringRef key) const {
  const Value *value = get(key);
  return value ? value->getAsArray() : nullptr;
}

const Object *Value::getObject(llvm::StringRef key) const {
  const Value *value = get(key);
  return value ? value->getAsObject() : nullptr;
}

namespace fxmlir::json {
/// A recursive-descent parser of RFC 8259 JSON.
class Parser {
public:
  Parser(llvm::StringRef text, llvm::BumpPtrAllocator &arena)
      : text(text), arena(arena) {}

  /// The text's value into `root`; false with `error` set if it is not JSON.
  bool parseDocument(Value &root) {
    if (!parseValue(0, root))
      return false;
    skipSpace();
    return position == text.size() || fail("text after the end of the value");
  }

  std::string error;

private:
  // Deeper input is an error, not a stack overflow; graphs nest a few levels.
  static constexpr unsigned kMaxDepth = 256;

  bool fail(llvm::StringRef message) {
    if (error.empty())
      error = ("invalid JSON at byte " + llvm::Twine(position) + ": " + message)
                  .str();
    return false;
  }

  void skipSpace() {
    while (position < text.size() && llvm::is_contained(" \t\n\r", text[position]))
      ++position;
  }

  bool consume(char c) {
    skipSpace();
    if (position < text.size() && text[position] == c) {
      ++position;
      return true;
    }
    return false;
  }

  template <typename T>
  llvm::ArrayRef<T> copy(llvm::ArrayRef<T> items) {
    T *stored = arena.Allocate<T>(items.size());
    std::uninitialized_copy(items.begin(), items.end(), stored);
    return {stored, items.size()};
  }

  bool parseValue(unsigned depth, Value &value) {
    if (depth > kMaxDepth)
      return fail("nested deeper than 256 levels");
    skipSpace();
    if (position == text.size())
      return fail("the text ends where a value should be");
    char c = text[position];
    if (c == '{')
      return parseObject(depth, value);
    if (c == '[')
      return parseArray(depth, value);
    if (c == '"') {
      value.valueKind = Value::Kind::String;
      return parseString(value.text);
    }
    if (c == '-' || llvm::isDigit(c))
      return parseNumber(value);
    for (auto [word, kind, boolean] :
         {std::tuple{"true", Value::Kind::Bool, true},
          std::tuple{"false", Value::Kind::Bool, false},
          std::tuple{"null", Value::Kind::Null, false}})
      if (text.substr(position).starts_with(word)) {
        position += llvm::StringRef(word).size();
        value.valueKind = kind;
        value.boolean = boolean;
        return true;
      }
    return fail("expected a value");
  }

  bool parseNumber(Value &value) {
    size_t start = position;
    auto digits = [&] {
      size_t first = position;
      while (position < text.size() && llvm::isDigit(text[position]))
        ++position;
      return position > first;
    };
    if (text[position] == '-')
      ++position;
    if (position < text.size() && text[position] == '0')
      ++position; // no leading zeros
    else if (!digits())
      return fail("expected a digit");
    if (position < text.size() && text[position] == '.') {
      ++position;
      if (!digits())
        return fail("expected a digit after '.'");
    }
    if (position < text.size() && (text[position] == 'e' || text[position] == 'E')) {
      ++position;
      if (position < text.size() && (text[position] == '+' || text[position] == '-'))
        ++position;
      if (!digits())
        return fail("expected a digit in the exponent");
    }
    value.valueKind = Value::Kind::Number;
    value.text = text.slice(start, position);
    return true;
  }

  /// The string at `position` (its opening quote), unescaped, into `out`.
  bool parseString(llvm::StringRef &out) {
    size_t start = ++position;
    // Most strings (names, dtypes) have no escape: they point into the text.
    size_t end = text.find_first_of("\"\\", start);
    if (end == llvm::StringRef::npos)
      return fail("a string does not end");
    if (text[end] == '"' && !hasControl(text.slice(start, end))) {
      position = end + 1;
      out = text.slice(start, end);
      return true;
    }
    std::string unescaped;
    while (true) {
      if (position >= text.size())
        return fail("a string does not end");
      char c = text[position++];
      if (c == '"')
        break;
      if (static_cast<unsigned char>(c) < 0x20) {
        --position;
        return fail("a control character in a string");
      }
      if (c != '\\') {
        unescaped.push_back(c);
        continue;
      }
      if (!parseEscape(unescaped))
        return false;
    }
    llvm::ArrayRef<char> stored =
        copy(llvm::ArrayRef<char>(unescaped.data(), unescaped.size()));
    out = llvm::StringRef(stored.data(), stored.size());
    return true;
  }

  static bool hasControl(llvm::StringRef s) {
    return llvm::any_of(s, [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  }

  /// The escape after a backslash, appended to `out` as UTF-8.
  bool parseEscape(std::string &out) {
    if (position >= text.size())
      return fail("a string does not end");
    char c = text[position++];
    switch (c) {
    case '"': case '\\': case '/': out.push_back(c); return true;
    case 'b': out.push_back('\b'); return true;
    case 'f': out.push_back('\f'); return true;
    case 'n': out.push_back('\n'); return true;
    case 'r': out.push_back('\r'); return true;
    case 't': out.push_back('\t'); return true;
    case 'u': break;
    default:
      --position;
      return fail("an unknown escape in a string");
    }
    std::optional<unsigned> unit = hex4();
    if (!unit)
      return false;
    unsigned codePoint = *unit;
    // A surrogate pair is one code point; a lone surrogate becomes U+FFFD,
    // as llvm::json reads it.
    if (codePoint >= 0xD800 && codePoint < 0xDC00 &&
        text.substr(position).starts_with("\\u")) {
      size_t save = position;
      position += 2;
      std::optional<unsigned> low = hex4();
      if (!low)
        return false;
      if (*low >= 0xDC00 && *low < 0xE000)
        codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (*low - 0xDC00);
      else
        position = save;
    }
    if (codePoint >= 0xD800 && codePoint < 0xE000)
      codePoint = 0xFFFD;
    char buffer[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
    char *end = buffer;
    llvm::ConvertCodePointToUTF8(codePoint, end);
    out.append(buffer, end);
    return true;
  }

  std::optional<unsigned> hex4() {
    unsigned value = 0;
    if (text.size() - position < 4 ||
        text.substr(position, 4).getAsInteger(16, value) ||
        !llvm::all_of(text.substr(position, 4), llvm::isHexDigit)) {
      fail("expected four hex digits after \\u");
      return std::nullopt;
    }
    position += 4;
    return value;
  }

  bool parseArray(unsigned depth, Value &value) {
    ++position;
    llvm::SmallVector<Value, 8> items;
    if (!consume(']')) {
      do {
        if (!parseValue(depth + 1, items.emplace_back()))
          return false;
      } while (consume(','));
      if (!consume(']'))
        return fail("expected ',' or ']'");
    }
    value.valueKind = Value::Kind::Array;
    value.elements = copy(llvm::ArrayRef<Value>(items));
    return true;
  }

  bool parseObject(unsigned depth, Value &value) {
    ++position;
    llvm::SmallVector<Member, 8> members;
    if (!consume('}')) {
      do {
        skipSpace();
        if (position == text.size() || text[position] != '"')
          return fail("expected a member's name");
        Member &member = members.emplace_back();
        if (!parseString(member.key))
          return false;
        if (!consume(':'))
          return fail("expected ':'");
        if (!parseValue(depth + 1, member.value))
          return false;
      } while (consume(','));
      if (!consume('}'))
        return fail("expected ',' or '}'");
    }
    value.valueKind = Value::Kind::Object;
    value.members = copy(llvm::ArrayRef<Member>(members));
    return true;
  }

  llvm::StringRef text;
  llvm::BumpPtrAllocator &arena;
  size_t position = 0;
};
} // namespace fxmlir::json

std::optional<Document> Document::parse(llvm::StringRef text,
                                        std::string &error) {
  Document document;
  Parser parser(text, *document.arena);
  if (!parser.parseDocument(document.rootValue)) {
    error = parser.error;
    return std::nullopt;
  }
  return document;
}
