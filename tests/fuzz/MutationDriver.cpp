//===- MutationDriver.cpp - run the fuzz target on mutated seed files -----===//
//
// A deterministic, dependency-free stand-in for libFuzzer's driver, so CI can
// fuzz with the project's own compiler: each input is a seed file (the
// examples and lit inputs) with a few random byte-level edits and inserted
// MLIR tokens, deep nesting included. A crash leaves the input in
// fxmlir-fuzz-crash.mlir; an input running longer than the hang limit is
// written to fxmlir-fuzz-hang.mlir and aborts the run.
//
//   fxmlir-fuzz [--seconds N] [--seed S] SEED.mlir...
//
//===----------------------------------------------------------------------===//

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

constexpr int kHangSeconds = 20;
constexpr const char *kCrashFile = "fxmlir-fuzz-crash.mlir";
constexpr const char *kHangFile = "fxmlir-fuzz-hang.mlir";

// Pieces of MLIR syntax the mutator inserts, so that edits reach past the
// lexer into the parser, the verifiers and the passes.
// clang-format off
const char *const kTokens[] = {
    "[", "]", "{", "}", "(", ")", "<", ">", "tensor<", "x", "?x", "f32", "i64",
    "bf16", "none", "\"", "\\", "%0", "%arg0", " : ", " -> ", ", ", "#fxmlir.",
    "device<", "array<", "i64: ", "dense<", "-1", "0x7FF0", "1.0e308", "^bb0",
    "func.func", "fxmlir.call", "fxmlir.aten.", "fxmlir.bias_add", "axis = ",
    "tuple<", "// ", "\n", "-----"};
// clang-format on

// The input being run, for the crash handler (async-signal-safe access).
const char *currentData = nullptr;
size_t currentSize = 0;

void writeInput(const char *path) {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return;
  for (size_t done = 0; done < currentSize;) {
    ssize_t n = ::write(fd, currentData + done, currentSize - done);
    if (n <= 0)
      break;
    done += size_t(n);
  }
  ::close(fd);
}

void onCrash(int signal) {
  writeInput(kCrashFile);
  const char message[] =
      "fxmlir-fuzz: crashed; input in fxmlir-fuzz-crash.mlir\n";
  (void)!::write(2, message, sizeof(message) - 1);
  std::raise(signal); // SA_RESETHAND restored the default action.
}

class Mutator {
public:
  explicit Mutator(uint64_t seed) : rng(seed) {}

  std::string mutate(std::string text) {
    for (int edits = pick(1, 8); edits > 0; --edits) {
      size_t at = text.empty() ? 0 : pick(0, text.size() - 1);
      switch (pick(0, 6)) {
      case 0: // Flip a bit.
        if (!text.empty())
          text[at] = char(text[at] ^ (1 << pick(0, 7)));
        break;
      case 1: // A random byte.
        text.insert(at, 1, char(pick(0, 255)));
        break;
      case 2: // Delete a run.
        text.erase(at, pick(1, 32));
        break;
      case 3: // Duplicate a run.
        text.insert(at, text.substr(at, pick(1, 64)));
        break;
      case 4: // A token.
      case 5:
        text.insert(at, kTokens[pick(0, std::size(kTokens) - 1)]);
        break;
      case 6: { // A token repeated: deep nesting, long lists.
        std::string token = kTokens[pick(0, std::size(kTokens) - 1)];
        std::string run;
        for (size_t n = pick(2, 20000); n > 0; --n)
          run += token;
        text.insert(at, run);
        break;
      }
      }
    }
    return text;
  }

private:
  size_t pick(size_t low, size_t high) {
    return std::uniform_int_distribution<size_t>(low, high)(rng);
  }
  std::mt19937_64 rng;
};

std::string readFile(const char *path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

} // namespace

int main(int argc, char **argv) {
  double seconds = 60;
  uint64_t seed = 1;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else
      seeds.push_back(readFile(argv[i]));
  }
  if (seeds.empty()) {
    std::cerr << "usage: fxmlir-fuzz [--seconds N] [--seed S] SEED.mlir...\n";
    return 2;
  }
  // The handler runs on a stack of its own: a stack overflow is one of the
  // crashes it must report.
  static std::vector<char> handlerStack(1 << 16);
  stack_t alternate{};
  alternate.ss_sp = handlerStack.data();
  alternate.ss_size = handlerStack.size();
  ::sigaltstack(&alternate, nullptr);
  struct sigaction action{};
  action.sa_handler = onCrash;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  for (int signal : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
    ::sigaction(signal, &action, nullptr);

  std::atomic<int64_t> started{0};
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    int64_t last = -1;
    auto since = std::chrono::steady_clock::now();
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      int64_t now = started.load();
      if (now != last) {
        last = now;
        since = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - since >
                 std::chrono::seconds(kHangSeconds)) {
        writeInput(kHangFile);
        std::cerr << "fxmlir-fuzz: input " << now << " ran over "
                  << kHangSeconds << " s; input in " << kHangFile << "\n";
        std::_Exit(1);
      }
    }
  });

  Mutator mutator(seed);
  auto end =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int64_t runs = 0, parsed = 0;
  for (size_t next = 0; std::chrono::steady_clock::now() < end; ++next) {
    // Every seed as it is first, then mutants of them in turn.
    const std::string &base = seeds[next % seeds.size()];
    std::string input = next < seeds.size() ? base : mutator.mutate(base);
    currentData = input.data();
    currentSize = input.size();
    started = ++runs;
    parsed +=
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()),
                               input.size()) == 0;
  }
  done = true;
  watchdog.join();
  std::cout << "fxmlir-fuzz: " << runs << " inputs (" << parsed
            << " parsed and run through the pipeline) from " << seeds.size()
            << " seeds, seed " << seed << ": no crash, no hang\n";
  return 0;
}
