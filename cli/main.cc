// memplan: plans the memory of an ONNX model ahead of time.
#include <iostream>

#include "common.h"
#include "memplan/error.h"

namespace memplan::cli {

void ShapeOptions::add_to(CLI::App& app) {
  app.add_option("--dim", dims, "Fix a free (symbolic) dimension by its dim_param name, e.g. --dim N=1 (repeatable)");
  app.add_option("--input-shape", input_shapes,
                 "Fix a graph input's whole shape, e.g. --input-shape input=1x3x224x224 (repeatable)");
  app.add_flag("--no-ort-rewrites", no_ort_rewrites,
               "Keep the graph as written: by default memplan rewrites it at load as ONNX Runtime does (duplicate Cast "
               "pairs removed; HardSwish, CastLike, SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, Bernoulli and "
               "SequenceMap expanded into their ONNX function bodies)");
}

onnx_io::LoadOptions ShapeOptions::load_options() const {
  onnx_io::LoadOptions options;
  for (const auto& d : dims) options.overrides.dims.insert(onnx_io::parse_dim_override(d));
  for (const auto& s : input_shapes) options.overrides.input_shapes.insert(onnx_io::parse_input_shape(s));
  options.ort_rewrites = !no_ort_rewrites;
  return options;
}

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

void warn(const std::string& message) {
  std::cerr << "memplan: warning: " << message << "\n";
}

}  // namespace memplan::cli

int main(int argc, char** argv) {
  using namespace memplan;
  CLI::App app{
      "memplan plans the memory of an ONNX model ahead of time: where every tensor lives, when it is\n"
      "released, and at which offset of a per-device arena.\n\n"
      "Exit codes: 0 success, 1 bad input (model, config or plan invalid; file missing), 2 usage error,\n"
      "3 a plan failed validation or replay, 4 a budget was exceeded.",
      "memplan"};
  app.set_version_flag("--version", std::string("memplan ") + MEMPLAN_VERSION);
  app.require_subcommand(1);
  cli::register_inspect(app);
  cli::register_shapes(app);
  cli::register_partition(app);
  cli::register_plan(app);
  cli::register_solve(app);
  cli::register_validate(app);
  cli::register_diff(app);
  cli::register_corrupt(app);
  cli::register_replay(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return static_cast<int>(ExitCode::kUsage);
  } catch (const Error& e) {
    // `diff` reports differences itself and exits 1 without an error line.
    if (std::string(e.what()) != "plans differ") std::cerr << "memplan: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    // Anything else is a bug in memplan, not the user's fault; still no crash.
    std::cerr << "memplan: internal error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kBadInput);
  }
  return 0;
}
