// Fuzz target: command lines. The input is split at newlines into arguments; "@model", "@plan" and "@out" stand
// for a bundled sample model, a plan of it and an output path. Every option value must be checked.
#include <filesystem>

#include "support.h"

using namespace memplan::fuzz;

// The target changes into a scratch directory (below); libFuzzer's own paths (corpus directories, inputs, the
// artifact prefix) are made absolute first, so a run started with relative ones still finds them.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static std::vector<std::string> args;
  static std::vector<char*> pointers;
  for (int i = 0; i < *argc; ++i) {
    std::string a = (*argv)[i];
    std::error_code ec;
    if (i > 0 && !a.empty() && a[0] != '-') {
      a = std::filesystem::absolute(a, ec).string();
    } else {
      for (const std::string flag : {"-artifact_prefix=", "-exact_artifact_path=", "-dict="})
        if (a.rfind(flag, 0) == 0 && a.size() > flag.size() && a[flag.size()] != '/')
          a = flag + std::filesystem::absolute(a.substr(flag.size()), ec).string();
    }
    args.push_back(a);
  }
  for (auto& a : args) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  *argv = pointers.data();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string model = write_scratch("model.onnx", source_file("samples/free_dims.onnx"));
  static const std::string plan = [] {
    const std::string path = scratch_dir() + "/sample-plan.json";
    run_cli({"plan", model, "--dim", "batch=2", "-o", path});
    return path;
  }();
  // Mutated arguments name files to write; run in a scratch directory so they land there, never in the
  // checkout the fuzzer was started from.
  static const std::string cwd = [] {
    const std::string dir = scratch_dir() + "/cwd";
    std::filesystem::create_directories(dir);
    std::filesystem::current_path(dir);
    return dir;
  }();
  std::vector<std::string> args;
  std::string arg;
  for (size_t i = 0; i <= size && args.size() < 24; ++i) {
    if (i == size || data[i] == '\n') {
      if (arg == "@model")
        arg = model;
      else if (arg == "@plan")
        arg = plan;
      else if (arg == "@out")
        arg = scratch_dir() + "/out";
      else if (arg.find('/') != std::string::npos)
        arg = "x";  // no paths outside the scratch directory
      else if (arg == "-" || arg.rfind("--html", 0) == 0 || arg == "--jitter")
        arg = "--help";  // no stdin, no jitter runs
      args.push_back(arg);
      arg.clear();
    } else {
      arg += static_cast<char>(data[i]);
    }
  }
  // A bound on the work one command line may ask for: no sweeps of thousands of points, no long searches.
  for (auto& a : args)
    if (a.find("..") != std::string::npos || a == "--iterations") a = "x";
  run_cli(args);
  std::error_code ec;
  std::filesystem::remove_all(scratch_dir() + "/out", ec);
  for (const auto& entry : std::filesystem::directory_iterator(cwd, ec)) std::filesystem::remove_all(entry.path(), ec);
  return 0;
}
