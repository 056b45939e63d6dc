//===- JsonReader.h - JSON text as an arena-allocated tree ------*- C++ -*-===//
//
// What JsonImport.cpp reads a graph with. llvm::json::Value gives every
// object a hash map of at least 64 buckets: for a graph's thousands of small
// objects, allocating and destroying those cost more than building the MLIR
// module (10 of 18 ms for 1004 FX nodes). Here objects are arrays of members,
// looked up by a scan, and everything lives in one bump allocator; strings
// without escapes point into the text.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_CORE_JSONREADER_H
#define FXMLIR_LIB_CORE_JSONREADER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace fxmlir::json {

struct Member;

/// A JSON value. Numbers keep their text: integers are read exactly, and
/// the graph form carries floats as strings anyway.
class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return valueKind; }

  std::optional<bool> getAsBoolean() const;
  /// The number as an int64_t, if it is one that fits.
  std::optional<int64_t> getAsInteger() const;
  std::optional<llvm::StringRef> getAsString() const;
  const llvm::ArrayRef<Value> *getAsArray() const {
    return valueKind == Kind::Array ? &elements : nullptr;
  }
  const llvm::ArrayRef<Member> *getAsObject() const {
    return valueKind == Kind::Object ? &members : nullptr;
  }

  /// The member `key` of an object; null if absent or not an object.
  const Value *get(llvm::StringRef key) const;
  std::optional<llvm::StringRef> getString(llvm::StringRef key) const;
  const llvm::ArrayRef<Value> *getArray(llvm::StringRef key) const;
  const llvm::ArrayRef<Member> *getObject(llvm::StringRef key) const;

private:
  friend class Parser;
  Kind valueKind = Kind::Null;
  bool boolean = false;
  llvm::StringRef text; // a string's characters, a number's spelling
  llvm::ArrayRef<Value> elements;
  llvm::ArrayRef<Member> members;
};

/// One member of an object, in the order of the text.
struct Member {
  llvm::StringRef key;
  Value value;
};

using Array = llvm::ArrayRef<Value>;
using Object = llvm::ArrayRef<Member>;

/// A parsed text: its tree lives as long as this and the text it was parsed
/// from.
class Document {
public:
  /// The tree of `text`, or (in `error`) "invalid JSON at byte N: ...".
  static std::optional<Document> parse(llvm::StringRef text,
                                       std::string &error);

  const Value &root() const { return rootValue; }

private:
  std::unique_ptr<llvm::BumpPtrAllocator> arena =
      std::make_unique<llvm::BumpPtrAllocator>();
  Value rootValue;
};

} // namespace fxmlir::json

#endif // FXMLIR_LIB_CORE_JSONREADER_H
