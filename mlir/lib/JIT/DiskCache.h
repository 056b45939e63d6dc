//===- DiskCache.h - compiled JIT functions on disk -------------*- C++ -*-===//

#ifndef FXMLIR_LIB_JIT_DISKCACHE_H
#define FXMLIR_LIB_JIT_DISKCACHE_H

#include "fxmlir/Core/Jit.h"

#include <optional>
#include <string>

namespace fxmlir::jit {

/// An object file and the signature of the function it holds.
struct CachedObject {
  std::string object;
  Signature signature;
};

/// `<dir>/<key>.o` and `<key>.sig`, written atomically (temporary file,
/// then rename) so that concurrent processes never read a partial entry.
class DiskCache {
public:
  /// `dir` empty: no cache. Throws Error when the directory cannot be
  /// created; `origin` names where `dir` came from in that message.
  DiskCache(std::string dir, const std::string &origin);

  const std::string &dir() const { return directory; }
  /// The entry, or nothing when absent or unreadable.
  std::optional<CachedObject> load(const std::string &key) const;
  /// Best effort: a full disk only costs the next process a compile.
  void store(const std::string &key, const CachedObject &entry) const;

private:
  std::string directory;
};

/// FXMLIR_CACHE_DIR, else $XDG_CACHE_HOME/fxmlir, else ~/.cache/fxmlir.
std::string defaultCacheDir();

std::string serializeSignature(const Signature &signature);
std::optional<Signature> parseSignature(const std::string &text);

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_DISKCACHE_H
