//===- DiskCache.h - compiled JIT functions on disk -------------*- C++ -*-===//

#ifndef FXMLIR_LIB_JIT_DISKCACHE_H
#define FXMLIR_LIB_JIT_DISKCACHE_H

#include "fxmlir/JIT/Jit.h"

#include <optional>
#include <string>

namespace fxmlir::jit {

/// An object file and the signature of the function it holds.
struct CachedObject {
  std::string object;
  Signature signature;
};

/// What the disk holds for a key.
struct CacheLookup {
  /// The entry, when its checksum and key verify.
  std::optional<CachedObject> entry;
  /// Why an entry that exists cannot be used (unreadable, not this user's
  /// alone, truncated, edited, or written for another key); empty when there
  /// is none or it verifies.
  std::string problem;
};

/// `<dir>/<key>.o` and `<key>.sig`, each written atomically (temporary
/// file, then rename) with mode 0600. The signature file names the key it
/// was written for and holds a SHA-256 over that key, the signature and the
/// object, so that a truncated, edited or misplaced file is never loaded.
/// Neither is a file, nor a directory, that another user owns or that group
/// or others can write: it could hold another user's code.
class DiskCache {
public:
  /// `dir` empty: no cache. A missing directory is created with mode 0700.
  /// One that cannot be created, is no directory or is not this user's
  /// alone is no error here: it is not used (see problem()).
  explicit DiskCache(std::string dir);

  const std::string &dir() const { return directory; }
  /// Why the directory is not used (with how to fix it); empty when it is,
  /// or when there is no cache.
  const std::string &problem() const { return unusable; }
  CacheLookup load(const std::string &key) const;
  /// Removes the entry's files (best effort: the directory may be
  /// read-only; a later store replaces them anyway).
  void discard(const std::string &key) const;
  /// Writes the entry, unless the directory is not used; returns why it
  /// could not, or nothing.
  std::optional<std::string> store(const std::string &key,
                                   const CachedObject &entry) const;

private:
  std::string directory;
  std::string unusable;
};

/// FXMLIR_CACHE_DIR, else $XDG_CACHE_HOME/fxmlir, else ~/.cache/fxmlir.
std::string defaultCacheDir();

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_DISKCACHE_H
