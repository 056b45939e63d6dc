//===- DiskCache.cpp - compiled JIT functions on disk ---------------------===//

#include "DiskCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <sstream>

using namespace fxmlir;
using namespace fxmlir::jit;

static constexpr const char *kSignatureHeader = "fxmlir-jit-signature 1";

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

DiskCache::DiskCache(std::string dir, const std::string &origin)
    : directory(std::move(dir)) {
  if (directory.empty())
    return;
  if (std::error_code error = llvm::sys::fs::create_directories(directory))
    throw Error(origin + ": cannot create the JIT cache directory '" +
                directory + "': " + error.message());
}

static std::string pathOf(const std::string &dir, const std::string &key,
                          const char *extension) {
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, key + extension);
  return std::string(path);
}

static std::optional<std::string> readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  return (*buffer)->getBuffer().str();
}

static bool writeAtomically(const std::string &path, const std::string &data) {
  std::string temporary =
      path + ".tmp" + std::to_string(llvm::sys::Process::getProcessId());
  {
    std::error_code error;
    llvm::raw_fd_ostream os(temporary, error, llvm::sys::fs::OF_None);
    if (error)
      return false;
    os << data;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return false;
    }
  }
  if (llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return false;
  }
  return true;
}

std::optional<CachedObject> DiskCache::load(const std::string &key) const {
  if (directory.empty())
    return std::nullopt;
  // The signature is written last: with it present, the object is whole.
  std::optional<std::string> signatureText =
      readFile(pathOf(directory, key, ".sig"));
  if (!signatureText)
    return std::nullopt;
  std::optional<Signature> signature = parseSignature(*signatureText);
  std::optional<std::string> object = readFile(pathOf(directory, key, ".o"));
  if (!signature || !object)
    return std::nullopt;
  return CachedObject{std::move(*object), std::move(*signature)};
}

void DiskCache::store(const std::string &key, const CachedObject &entry) const {
  if (directory.empty())
    return;
  if (writeAtomically(pathOf(directory, key, ".o"), entry.object))
    writeAtomically(pathOf(directory, key, ".sig"),
                    serializeSignature(entry.signature));
}

// The signature as lines of words:
//   fxmlir-jit-signature 1
//   rows <0|1>
//   inputs <n>, then per input: <dtype> <row 0|1> <rank> <dims...>
//   results <n>, then per result: <dtype> <rank> <size|input:dim ...>
std::string jit::serializeSignature(const Signature &signature) {
  std::ostringstream os;
  os << kSignatureHeader << "\nrows " << signature.rowsSplittable
     << "\ninputs " << signature.inputs.size() << "\n";
  for (auto [index, input] : llvm::enumerate(signature.inputs)) {
    os << static_cast<int>(input.dtype) << " " << signature.rowInputs[index]
       << " " << input.dims.size();
    for (int64_t dim : input.dims)
      os << " " << dim;
    os << "\n";
  }
  os << "results " << signature.results.size() << "\n";
  for (const ResultSpec &result : signature.results) {
    os << static_cast<int>(result.dtype) << " " << result.dims.size();
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

std::optional<Signature> jit::parseSignature(const std::string &text) {
  std::istringstream is(text);
  std::string header, word;
  std::getline(is, header);
  Signature signature;
  size_t count;
  if (header != kSignatureHeader || !(is >> word) || word != "rows" ||
      !(is >> signature.rowsSplittable) || !(is >> word) || word != "inputs" ||
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
    size_t rank;
    if (!readDType(is, result.dtype) || !(is >> rank))
      return std::nullopt;
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
