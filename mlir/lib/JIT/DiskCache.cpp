//===- DiskCache.cpp - compiled JIT functions on disk ---------------------===//

#include "DiskCache.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <sstream>
#include <unistd.h>

using namespace fxmlir;
using namespace fxmlir::jit;

// The signature file: a header naming the key, the object's size and the
// checksum, then the signature (see serializeSignature):
//   fxmlir-jit-entry 4
//   key <key>
//   object <bytes>
//   sha256 <hex of SHA-256 over "<key>\n", the signature lines, the object>
static constexpr const char *kEntryHeader = "fxmlir-jit-entry 4";

std::string jit::defaultCacheDir() {
  if (const char *dir = std::getenv("FXMLIR_CACHE_DIR"))
    return dir;
  llvm::SmallString<128> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (!llvm::sys::path::home_directory(path))
    return "";
  else
    llvm::sys::path::append(path, ".cache");
  llvm::sys::path::append(path, "fxmlir");
  return std::string(path);
}

/// Why a cache directory or entry file with `status` must not be used, or
/// nothing: its entries are code this process runs, so a file that another
/// user owns or can write could be their code.
static std::optional<std::string>
untrusted(const llvm::sys::fs::file_status &status) {
  if (status.getUser() != geteuid())
    return "owned by uid " + std::to_string(status.getUser()) +
           ", not by this user";
  if (status.permissions() &
      (llvm::sys::fs::group_write | llvm::sys::fs::others_write)) {
    std::string mode;
    llvm::raw_string_ostream(mode)
        << llvm::format("%04o", status.permissions());
    return "writable by group or others (mode " + mode + ")";
  }
  return std::nullopt;
}

DiskCache::DiskCache(std::string dir) : directory(std::move(dir)) {
  if (directory.empty())
    return;
  // Private from the start, as are the parents it creates.
  if (std::error_code error = llvm::sys::fs::create_directories(
          directory, /*IgnoreExisting=*/true, llvm::sys::fs::owner_all)) {
    unusable = "cannot create the directory: " + error.message() +
               "; another FXMLIR_CACHE_DIR fixes this";
    return;
  }
  // An existing file is no error for create_directories.
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(directory, status))
    unusable = "cannot read its status: " + error.message();
  else if (status.type() == llvm::sys::fs::file_type::regular_file)
    unusable = "it is a file, not a directory; another FXMLIR_CACHE_DIR "
               "fixes this";
  else if (status.type() != llvm::sys::fs::file_type::directory_file)
    unusable = "it is not a directory; another FXMLIR_CACHE_DIR fixes this";
  else if (std::optional<std::string> why = untrusted(status))
    unusable = "it is " + *why +
               ", so another user could plant code that this process would "
               "run; `chmod go-w '" +
               directory + "'` (when it is yours) or another "
               "FXMLIR_CACHE_DIR fixes this";
}

static std::string pathOf(const std::string &dir, const std::string &key,
                          const char *extension) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, key + extension);
  return std::string(path);
}

/// The bytes of the entry file at `path`, or in `problem` why they cannot be
/// read or must not be loaded; neither when there is no such file. Checked
/// on the open file, so that the file checked is the file read.
static std::optional<std::string> readEntryFile(const std::string &path,
                                                std::string &problem) {
  llvm::Expected<llvm::sys::fs::file_t> file =
      llvm::sys::fs::openNativeFileForRead(path);
  if (!file) {
    std::error_code error = llvm::errorToErrorCode(file.takeError());
    if (error != std::errc::no_such_file_or_directory)
      problem = "cannot read '" + path + "': " + error.message();
    return std::nullopt;
  }
  llvm::scope_exit close([&] { llvm::sys::fs::closeFile(*file); });
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(*file, status)) {
    problem = "cannot read '" + path + "': " + error.message();
    return std::nullopt;
  }
  if (std::optional<std::string> why = untrusted(status)) {
    problem = "'" + path + "' is " + *why;
    return std::nullopt;
  }
  auto buffer = llvm::MemoryBuffer::getOpenFile(
      *file, path, /*FileSize=*/-1, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    problem = "cannot read '" + path + "': " + buffer.getError().message();
    return std::nullopt;
  }
  return (*buffer)->getBuffer().str();
}

/// Writes `data` to `path` through a temporary file; returns why it could
/// not, or nothing.
static std::optional<std::string> writeAtomically(const std::string &path,
                                                  const std::string &data) {
  // Readable and writable by this user only (see untrusted); a new file, so
  // that no stale temporary keeps a wider mode.
  int fd;
  llvm::SmallString<128> temporary;
  if (std::error_code error = llvm::sys::fs::createUniqueFile(
          path + ".tmp%%%%%%", fd, temporary, llvm::sys::fs::OF_None,
          llvm::sys::fs::owner_read | llvm::sys::fs::owner_write))
    return "cannot create a temporary file for '" + path +
           "': " + error.message();
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << data;
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return "cannot write '" + temporary.str().str() + "': " + message;
    }
  }
  if (std::error_code error = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return "cannot rename '" + temporary.str().str() + "' to '" + path +
           "': " + error.message();
  }
  return std::nullopt;
}

static std::string checksum(const std::string &key,
                            llvm::StringRef signatureLines,
                            const std::string &object) {
  llvm::SHA256 hash;
  hash.update(key);
  hash.update("\n");
  hash.update(signatureLines);
  hash.update(object);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

static std::string serializeSignature(const Signature &signature);
static std::optional<Signature> parseSignature(llvm::StringRef text);

CacheLookup DiskCache::load(const std::string &key) const {
  if (directory.empty() || !unusable.empty())
    return {};
  // The signature file is written last: without it there is no entry.
  std::string signaturePath = pathOf(directory, key, ".sig");
  std::string objectPath = pathOf(directory, key, ".o");
  CacheLookup lookup;
  std::optional<std::string> signatureFile =
      readEntryFile(signaturePath, lookup.problem);
  if (!signatureFile)
    return lookup;
  std::optional<std::string> object = readEntryFile(objectPath, lookup.problem);
  if (!object) {
    if (lookup.problem.empty())
      lookup.problem = "'" + objectPath + "' is missing";
    return lookup;
  }
  auto fail = [&](std::string problem) {
    lookup.problem = std::move(problem);
    return lookup;
  };

  // The header's four lines, then the signature.
  llvm::StringRef rest = *signatureFile, header, keyLine, objectLine, sumLine;
  std::tie(header, rest) = rest.split('\n');
  std::tie(keyLine, rest) = rest.split('\n');
  std::tie(objectLine, rest) = rest.split('\n');
  std::tie(sumLine, rest) = rest.split('\n');
  size_t objectBytes;
  if (header != kEntryHeader || !keyLine.consume_front("key ") ||
      !objectLine.consume_front("object ") ||
      objectLine.getAsInteger(10, objectBytes) ||
      !sumLine.consume_front("sha256 "))
    return fail("'" + signaturePath + "' has no '" + kEntryHeader +
                "' header with the key, object size and checksum");
  if (keyLine != key)
    return fail("'" + signaturePath + "' was written for another key, " +
                keyLine.str());
  if (object->size() != objectBytes)
    return fail("'" + objectPath + "' has " + std::to_string(object->size()) +
                " bytes, its entry says " + std::to_string(objectBytes));
  if (sumLine != checksum(key, rest, *object))
    return fail("the checksum of '" + objectPath + "' and '" + signaturePath +
                "' does not match: one of them was changed");
  std::optional<Signature> signature = parseSignature(rest);
  if (!signature)
    return fail("'" + signaturePath + "' holds no valid signature");
  lookup.entry = CachedObject{std::move(*object), std::move(*signature)};
  return lookup;
}

void DiskCache::discard(const std::string &key) const {
  if (directory.empty())
    return;
  // The signature first: without it, the object is not an entry.
  llvm::sys::fs::remove(pathOf(directory, key, ".sig"));
  llvm::sys::fs::remove(pathOf(directory, key, ".o"));
}

std::optional<std::string> DiskCache::store(const std::string &key,
                                            const CachedObject &entry) const {
  if (directory.empty() || !unusable.empty())
    return std::nullopt;
  std::string lines = serializeSignature(entry.signature);
  if (std::optional<std::string> error =
          writeAtomically(pathOf(directory, key, ".o"), entry.object))
    return error;
  return writeAtomically(pathOf(directory, key, ".sig"),
                         std::string(kEntryHeader) + "\nkey " + key +
                             "\nobject " +
                             std::to_string(entry.object.size()) +
                             "\nsha256 " +
                             checksum(key, lines, entry.object) + "\n" +
                             lines);
}

// The signature as lines of words:
//   rows <0|1> <rows from end>
//   inputs <n>, then per input: <dtype> <row 0|1> <rank> <dims...>
//   results <n>, then per result: <dtype> <summed 0|1> <rank>
//     <size|input:dim ...>
static std::string serializeSignature(const Signature &signature) {
  std::ostringstream os;
  os << "rows " << signature.rowsSplittable << " " << signature.rowsFromEnd
     << "\ninputs " << signature.inputs.size() << "\n";
  for (auto [index, input] : llvm::enumerate(signature.inputs)) {
    os << static_cast<int>(input.dtype) << " " << signature.rowInputs[index]
       << " " << input.dims.size();
    for (int64_t dim : input.dims)
      os << " " << dim;
    os << "\n";
  }
  os << "results " << signature.results.size() << "\n";
  for (auto [index, result] : llvm::enumerate(signature.results)) {
    os << static_cast<int>(result.dtype) << " "
       << signature.summedResults[index] << " " << result.dims.size();
    for (const DimSource &dim : result.dims) {
      if (dim.input >= 0)
        os << " " << dim.input << ":" << dim.dim;
      else
        os << " " << dim.size;
    }
    os << "\n";
  }
  return os.str();
}

static bool readDType(std::istream &is, DType &dtype) {
  int value;
  if (!(is >> value) || value < 0 || value > static_cast<int>(DType::Float64))
    return false;
  dtype = static_cast<DType>(value);
  return true;
}

static std::optional<Signature> parseSignature(llvm::StringRef text) {
  std::istringstream is(text.str());
  std::string word;
  Signature signature;
  size_t count;
  if (!(is >> word) || word != "rows" ||
      !(is >> signature.rowsSplittable) || !(is >> signature.rowsFromEnd) ||
      signature.rowsFromEnd < 0 || !(is >> word) || word != "inputs" ||
      !(is >> count))
    return std::nullopt;
  for (size_t i = 0; i < count; ++i) {
    TensorSpec input;
    bool row;
    size_t rank;
    if (!readDType(is, input.dtype) || !(is >> row) || !(is >> rank))
      return std::nullopt;
    input.dims.resize(rank);
    for (int64_t &dim : input.dims)
      if (!(is >> dim))
        return std::nullopt;
    signature.inputs.push_back(std::move(input));
    signature.rowInputs.push_back(row);
  }
  if (!(is >> word) || word != "results" || !(is >> count))
    return std::nullopt;
  for (size_t i = 0; i < count; ++i) {
    ResultSpec result;
    bool summed;
    size_t rank;
    if (!readDType(is, result.dtype) || !(is >> summed) || !(is >> rank) ||
        (summed && !signature.rowsSplittable))
      return std::nullopt;
    signature.summedResults.push_back(summed);
    for (size_t d = 0; d < rank; ++d) {
      if (!(is >> word))
        return std::nullopt;
      DimSource dim;
      size_t colon = word.find(':');
      try {
        if (colon == std::string::npos) {
          dim.size = std::stoll(word);
        } else {
          dim.input = std::stoi(word.substr(0, colon));
          dim.dim = std::stoi(word.substr(colon + 1));
        }
      } catch (const std::exception &) {
        return std::nullopt;
      }
      if (dim.input >= static_cast<int>(signature.inputs.size()) ||
          (dim.input >= 0 &&
           (dim.dim < 0 || static_cast<size_t>(dim.dim) >=
                               signature.inputs[dim.input].dims.size())))
        return std::nullopt;
      result.dims.push_back(dim);
    }
    signature.results.push_back(std::move(result));
  }
  return signature;
}
