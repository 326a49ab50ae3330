// memplan partition MODEL: device placement, copy nodes and streams, written as an ORT partition config.
#include <iostream>

#include "common.h"
#include "memplan/api/internal.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "partition_options.h"

namespace memplan::cli {

void PartitionOptions::add_to(CLI::App& app, bool with_config) {
  app.add_option("--device", device,
                 "Where nodes run: cpu (default) or gpu[:N]; with gpu, the placement rules "
                 "send some nodes to the CPU")
      ->capture_default_str();
  app.add_option("--placement", placement,
                 "Placement rules file (JSON, format memplan.placement) replacing the "
                 "built-in rules for --device");
  app.add_option("--op-properties", op_properties,
                 "Op properties file (JSON, format memplan.op-properties) extending the built-in table, e.g. for "
                 "custom ops");
  if (with_config)
    app.add_option("--partition", config, "An ONNX Runtime DeviceBasedPartitioner config to use for the streams");
  app.add_option("--streams-per-device", streams_per_device,
                 "Split each device's nodes into up to K streams running independent branches concurrently")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--order", order, kOrderHelp)->check(CLI::IsMember(order_kind_names()))->capture_default_str();
}

partition::PartitionRequest PartitionOptions::request() const {
  PlanSettings settings;
  settings.device = device;
  settings.placement = placement;
  settings.op_properties = op_properties;
  settings.partition_config = config;
  settings.streams_per_device = streams_per_device;
  settings.order = order;
  return api::partition_request(settings);
}

namespace {

struct PartitionArgs {
  std::string model;
  std::string output = "-";
  ShapeOptions shapes;
  PartitionOptions partition;
};

void run_partition(const PartitionArgs& args) {
  auto request = args.partition.request();  // options first: a bad --device fails before any work
  if (!args.output.empty()) check_output_path(args.output);
  Model model = onnx_io::load_model(args.model, args.shapes.load_options());
  for (const auto& w : model.warnings) warn(args.model + ": " + w);
  auto result = partition::partition_model(std::move(model), request);
  for (const auto& w : result.warnings) warn(w);
  write_file_atomically(args.output, partition::write_partition_config(result.placed.graph, result.partition));
  if (args.output == "-") std::cout << "\n";

  // A summary on stderr, so stdout stays the config.
  const auto& p = result.partition;
  std::cerr << "memplan: " << p.streams.size() << " stream(s) over " << result.placed.graph.nodes.size() << " nodes";
  if (result.placed.copies_to_device + result.placed.copies_to_host)
    std::cerr << " (" << result.placed.copies_to_device << " MemcpyFromHost, " << result.placed.copies_to_host
              << " MemcpyToHost inserted)";
  std::cerr << ":";
  for (size_t s = 0; s < p.streams.size(); ++s)
    std::cerr << " [" << s << "] " << partition::device_name(p.stream_device[s]) << " " << p.streams[s].size();
  std::cerr << "\n";
  if (result.split) {
    const auto& sp = *result.split;
    char line[320];
    if (sp.no_gain)
      std::snprintf(line, sizeof line,
                    "memplan: no split into %d streams beats one stream per device in the cost model (estimated %.1f "
                    "us); kept one. Identity, Reshape-like views and inference Dropout cost nothing: ORT runs them "
                    "as aliases or removes them\n",
                    args.partition.streams_per_device, sp.estimated_us);
    else
      std::snprintf(line, sizeof line,
                    "memplan: estimated time %.1f us with one stream per device, %.1f us with %zu streams (speed-up "
                    "%.2fx from real work only; the critical path %.1f us bounds it at %.2fx)\n",
                    sp.one_stream_us, sp.estimated_us, p.streams.size(), sp.one_stream_us / sp.estimated_us,
                    sp.critical_path_us, sp.one_stream_us / sp.critical_path_us);
    std::cerr << line;
  }
  std::cerr << "memplan: ORT reads it from the session config entry session.node_partition_config_file. It names "
               "the nodes of this model, which is ORT's graph at graph optimization level 'disabled'; for a session "
               "at basic, extended or all (ORT's default), whose rewrites add and fuse nodes, partition the graph ORT "
               "saves at that level (optimizedModelFilePath) with --order written. A path that does not exist makes "
               "ORT write its own config there instead (docs/partition.md: Partition configs in ONNX Runtime)\n";
}

}  // namespace

void register_partition(CLI::App& app) {
  auto args = std::make_shared<PartitionArgs>();
  CLI::App* cmd = app.add_subcommand(
      "partition", "Place nodes on devices, insert copies, split streams; write an ONNX Runtime partition config");
  cmd->add_option("MODEL", args->model, "The .onnx model file")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the config (default: stdout)")->check(output_path());
  args->shapes.add_to(*cmd);
  args->partition.add_to(*cmd, true);
  cmd->footer(
      "Examples:\n"
      "  memplan partition model.onnx --device gpu -o partition.json\n"
      "  memplan partition model.onnx --device gpu --streams-per-device 2 -o partition.json\n"
      "Load it in ORT with the session config entry session.node_partition_config_file (docs/partition.md: Partition "
      "configs\n"
      "in ONNX Runtime) at graph optimization level disabled (basic or extended when ORT adds no nodes).");
  cmd->callback([args] { run_partition(*args); });
}

}  // namespace memplan::cli
