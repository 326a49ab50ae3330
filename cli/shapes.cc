// memplan shapes MODEL -o OUT.onnx: the model with every inferred shape written as value_info.
#include <iostream>

#include "common.h"
#include "memplan/file_io.h"
#include "memplan/graph_summary.h"
#include "memplan/onnx_io/load.h"

namespace memplan::cli {
namespace {

struct ShapesArgs {
  std::string model;
  std::string output;
  ShapeOptions shapes;
};

void run_shapes(const ShapesArgs& args) {
  check_output_path(args.output);
  auto options = args.shapes.load_options();
  onnx_io::write_model_with_shapes(args.model, args.output, options);
  Model model = onnx_io::load_model(args.output, {});
  for (const auto& w : model.warnings) warn(args.model + ": " + w);
  GraphSummary s = summarize(model, OrderKind::kDefault);
  std::cerr << "memplan: wrote " << args.output << ": " << model.graph.values.size() << " values, "
            << s.unknown_size.size() << " of unknown size\n";
  const size_t shown = std::min<size_t>(s.unknown_size.size(), 10);
  for (size_t i = 0; i < shown; ++i)
    std::cerr << "  " << s.unknown_size[i].name << ": " << s.unknown_size[i].reason << "\n";
  if (s.unknown_size.size() > shown)
    std::cerr << "  ... " << s.unknown_size.size() - shown << " more (memplan inspect --json lists them all)\n";
}

}  // namespace

void register_shapes(CLI::App& app) {
  auto args = std::make_shared<ShapesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "shapes", "Write the model back with every inferred shape as value_info (weights copied as they are)");
  cmd->add_option("MODEL", args->model, "The .onnx model file")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the model (may be MODEL itself)")
      ->check(output_path())
      ->required();
  args->shapes.add_to(*cmd);
  cmd->footer(
      "Examples:\n"
      "  memplan shapes model.onnx --dim batch=8 -o shaped.onnx\n"
      "  memplan shapes model.onnx --input-shape input=1x3x224x224 -o shaped.onnx");
  cmd->callback([args] { run_shapes(*args); });
}

}  // namespace memplan::cli
