#include "memplan/onnx_io/load.h"

#include <absl/container/flat_hash_map.h>
#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_set>

#include "attribute_ranges.h"
#include "contrib_schemas.h"
#include "function_inline.h"
#include "memplan/error.h"
#include "memplan/execution_order.h"
#include "memplan/file_io.h"
#include "memplan/graph_edit.h"
#include "memplan/isolated.h"
#include "memplan/stage_times.h"
#include "memplan/text_escape.h"
#include "model_reader.h"
#include "op_support.h"
#include "precheck.h"
#include "proto_model.h"
#include "segmented_inference.h"
#include "shadowed_names.h"
#include "shape_pass.h"
#include "shape_table.h"
#include "types_table.h"

namespace memplan::onnx_io {
namespace {

int64_t parse_int(const std::string& text, const std::string& what) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty()) fail_usage(what + ": '" + text + "' is not an integer");
  if (v < 0) fail_usage(what + ": '" + text + "' is negative");
  return v;
}

std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& option) {
  auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    fail_usage(option + " expects NAME=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

std::pair<std::string, int64_t> parse_dim_override(const std::string& text) {
  auto [name, value] = split_assignment(text, "--dim");
  return {name, parse_int(value, "--dim " + name)};
}

std::pair<std::string, int64_t> parse_trip_count(const std::string& text) {
  auto [name, value] = split_assignment(text, "--trip-count");
  return {name, parse_int(value, "--trip-count " + name)};
}

std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& text) {
  auto [name, dims_text] = split_assignment(text, "--input-shape");
  std::vector<int64_t> dims;
  size_t start = 0;
  while (start <= dims_text.size()) {
    size_t sep = dims_text.find_first_of("x,", start);
    if (sep == std::string::npos) sep = dims_text.size();
    dims.push_back(parse_int(dims_text.substr(start, sep - start), "--input-shape " + name));
    start = sep + 1;
  }
  return {name, dims};
}

namespace {

struct PreparedModel {
  onnx::ModelProto proto;
  // The child's value_info and outputs, where it sent them as a table: `proto` then holds the parse's (begin_prepare).
  std::optional<TypesTable> types;
  std::vector<std::string> warnings;
  ShapePassReport shapes;
  int functions_inlined = 0;
  int name_counter = 0;  // ORT's Graph::name_generator_ after the expansion
  // listed_in_order(proto.graph()), where ONNX's inference (infer_in_topological_order) found it: its nodes are the
  // same after it (ORT's view's table asks again).
  std::optional<bool> listed_in_order;
};

// Every tensor shape a graph and its subgraphs declare: inputs, outputs, value_info.
template <typename Fn>
void for_each_value_type(onnx::GraphProto& g, Fn&& fn) {
  auto tensor_shape = [&](onnx::TypeProto& type) {
    if (type.has_tensor_type() && type.tensor_type().has_shape()) fn(*type.mutable_tensor_type()->mutable_shape());
  };
  for_each_declared_type(g, tensor_shape);
}

// ONNX's schemas, with the inference of Slice and Reshape given what the newer ONNX inside ORT 1.30 infers and ONNX
// 1.12 does not: an output rank with every dim anonymous (ORT then knows that a Shape of it has a static shape). A
// Slice with computed starts or ends has its data's rank; a Reshape to a computed shape of known length has that
// length. Applied as each node is inferred, in the one pass: given after a whole pass instead, each rank let the
// next pass reach the next Slice or Reshape, one pass per link of such a chain (177 passes on torchvision's Swin-S,
// 7.5 s).
class NewerRankRules final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int version, const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Instance()->GetSchema(key, version, domain);
    const bool slice = key == "Slice", reshape = key == "Reshape";
    if (!schema || !(slice || reshape) || !is_default_domain(domain)) return schema;
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<onnx::OpSchema>& patched = patched_[schema];
    if (!patched) {
      patched = std::make_unique<onnx::OpSchema>(*schema);
      patched->TypeAndShapeInferenceFunction(
          [original = schema->GetTypeAndShapeInferenceFunction(), slice](onnx::InferenceContext& ctx) {
            try {
              if (original) original(ctx);
            } catch (const std::exception&) {
              // (ONNX records its own failures and goes on; the rank below is what the newer ONNX gets to)
            }
            give_rank(ctx, slice);
          });
    }
    return patched.get();
  }

 private:
  static void give_rank(onnx::InferenceContext& ctx, bool slice) {
    if (ctx.getNumInputs() < 2 || ctx.getNumOutputs() < 1) return;
    onnx::TypeProto* out = ctx.getOutputType(0);
    if (!out || (out->has_tensor_type() && out->tensor_type().has_shape())) return;
    const onnx::TypeProto* data = ctx.getInputType(0);
    if (!data || !data->has_tensor_type() || !data->tensor_type().has_shape()) return;
    if (ctx.getInputData(0)) return;  // (an initializer: as before, left to ONNX's own rule)
    int rank = data->tensor_type().shape().dim_size();
    if (slice && rank == 0) return;
    if (!slice) {
      const onnx::TypeProto* target = ctx.getInputType(1);
      if (!target || !target->has_tensor_type() || !target->tensor_type().has_shape()) return;
      const auto& t = target->tensor_type().shape();
      // (a hostile model's length could be anything: beyond any real rank, leave it unknown)
      if (t.dim_size() != 1 || !t.dim(0).has_dim_value() || t.dim(0).dim_value() < 0 || t.dim(0).dim_value() > 64)
        return;
      rank = static_cast<int>(t.dim(0).dim_value());
    }
    auto* tensor = out->mutable_tensor_type();
    tensor->set_elem_type(data->tensor_type().elem_type());
    auto* shape = tensor->mutable_shape();
    for (int i = 0; i < rank; ++i) shape->add_dim();
  }

  mutable std::mutex mutex_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> patched_;
};

// Runs ONNX's inference, then forgets the dim names it invented (those the model did not write): ORT's per-node
// inference leaves such dims anonymous.
void infer_with_anonymous_new_dims(onnx::ModelProto& proto, const onnx::ShapeInferenceOptions& inference) {
  std::set<std::string> written;
  for_each_value_type(*proto.mutable_graph(), [&](onnx::TensorShapeProto& shape) {
    for (const auto& d : shape.dim())
      if (d.has_dim_param()) written.insert(d.dim_param());
  });
  static const NewerRankRules newer_ranks;
  infer_model_shapes(proto, &newer_ranks, inference);
  for_each_value_type(*proto.mutable_graph(), [&](onnx::TensorShapeProto& shape) {
    for (auto& d : *shape.mutable_dim())
      if (d.has_dim_param() && !written.count(d.dim_param())) d.clear_dim_param();
  });
}

// Runs `inference` on `proto` with its nodes in a topological order. ONNX's inference walks the node list, ORT's in
// topological order; a list that is not one (expanded functions sit at its end) would leave the nodes reading the
// values made later untyped. The nodes are moved into that order and back (pointers, nothing copied).
// `listed_as_is`: set to listed_in_order(proto.graph()).
template <typename Inference>
void infer_in_topological_order(onnx::ModelProto& proto, Inference&& inference, std::optional<bool>& listed_as_is) {
  auto* nodes = proto.mutable_graph()->mutable_node();
  const int n = nodes->size();
  bool in_order = false;
  std::vector<int> order = topological_order(proto.graph(), &in_order);
  listed_as_is = in_order;
  bool listed_in_order = static_cast<int>(order.size()) == n;
  for (int i = 0; listed_in_order && i < n; ++i) listed_in_order = order[static_cast<size_t>(i)] == i;
  if (listed_in_order) return inference();
  std::vector<bool> listed(static_cast<size_t>(n), false);
  for (int i : order) listed[static_cast<size_t>(i)] = true;
  for (int i = 0; i < n; ++i)
    if (!listed[static_cast<size_t>(i)]) order.push_back(i);  // on a cycle: last (the graph builder reports it)
  std::vector<onnx::NodeProto*> as_listed(static_cast<size_t>(n));
  nodes->ExtractSubrange(0, n, as_listed.data());
  for (int i : order) nodes->AddAllocated(as_listed[static_cast<size_t>(i)]);
  struct PutBack {
    google::protobuf::RepeatedPtrField<onnx::NodeProto>* nodes;
    const std::vector<onnx::NodeProto*>& as_listed;
    ~PutBack() {
      std::vector<onnx::NodeProto*> taken(as_listed.size());  // (the same nodes, in topological order)
      nodes->ExtractSubrange(0, nodes->size(), taken.data());
      for (onnx::NodeProto* node : as_listed) nodes->AddAllocated(node);
    }
  } put_back{nodes, as_listed};
  inference();
}

// ONNX's shape inference and memplan's shape pass on `p`, as `options` ask (run_isolated runs it in a child).
void infer_as_named(PreparedModel& p, const LoadOptions& options, const std::string& path) {
  if (options.infer_shapes && options.complete_shapes) {
    p.shapes = complete_shapes(p.proto, path, {}, options.overrides.trip_counts);
    p.warnings.insert(p.warnings.end(), p.shapes.warnings.begin(), p.shapes.warnings.end());
  } else if (options.infer_shapes) {
    // Strict mode off: a node ONNX cannot infer leaves its outputs unknown rather than failing the load.
    onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0, options.data_propagation);
    try {
      infer_in_topological_order(
          p.proto,
          [&] {
            if (options.name_invented_dims)
              infer_model_shapes(p.proto, onnx::OpSchemaRegistry::Instance(), inference);
            else
              infer_with_anonymous_new_dims(p.proto, inference);
          },
          p.listed_in_order);
    } catch (const std::exception& e) {
      p.warnings.push_back(std::string("ONNX shape inference stopped early: ") + e.what());
    }
  }
}

// ONNX's shape inference and memplan's shape pass on `p`, with the names of subgraph values that shadow outer ones
// made unique while they run.
void infer(PreparedModel& p, const LoadOptions& options, const std::string& path) {
  // (a subgraph value named like an outer one: ORT's inlining makes them, ONNX's inference would not type it)
  const bool renamed = make_shadowed_names_unique(*p.proto.mutable_graph());
  infer_as_named(p, options, path);
  if (!renamed) return;
  restore_shadowed_names(*p.proto.mutable_graph(), p.shapes.dynamic);
  for (std::string& w : p.warnings) w = without_unique_marks(std::move(w));
}

// The positions of the graph's nodes that hold subgraphs (inference writes types inside them too).
std::vector<int> subgraph_holders(const onnx::GraphProto& g) {
  std::vector<int> holders;
  for (int i = 0; i < g.node_size(); ++i)
    if (holds_subgraph(g.node(i))) holders.push_back(i);
  return holders;
}

// What a child's expansion and inference change in a model, to send back: without an expansion (which rewrites
// nodes), the graph's outputs and value_info and the nodes that hold subgraphs; else the whole model. Sending the
// changes rather than the model spares a serialisation and a parse of every node (0.25 s at 100k nodes).
std::string inferred_part(onnx::ModelProto& proto, bool whole, nlohmann::json& meta) {
  std::string out;
  if (whole) {
    if (!proto.SerializeToString(&out)) throw std::runtime_error("cannot serialise the inferred model (over 2 GiB?)");
    return out;
  }
  onnx::GraphProto changed;
  auto* g = proto.mutable_graph();
  changed.mutable_output()->Swap(g->mutable_output());
  changed.mutable_value_info()->Swap(g->mutable_value_info());
  const std::vector<int> holders = subgraph_holders(*g);
  for (int i : holders) changed.add_node()->mutable_attribute()->Swap(g->mutable_node(i)->mutable_attribute());
  meta["subgraph_holders"] = holders;
  if (!changed.SerializeToString(&out)) throw std::runtime_error("cannot serialise the inferred types (over 2 GiB?)");
  return out;
}

// Parses what a child sent: its serialisation of a model that parsed within protobuf's nesting limit, plus the types
// inference added (a typed value in the deepest body nests a few levels deeper than that body's model did).
template <typename Message>
bool parse_reply(Message& message, const char* data, size_t size) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data), static_cast<int>(size));
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  in.SetRecursionLimit(2 * 100);
  return message.ParseFromCodedStream(&in);
}

// Puts what inferred_part sent into `proto`, the model the child started from.
void take_inferred_part(onnx::ModelProto& proto, const char* data, size_t size, const nlohmann::json& meta) {
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("shape inference returned more than 2 GiB");
  const auto holders = meta.find("subgraph_holders");
  if (holders == meta.end()) {
    proto.Clear();
    if (!parse_reply(proto, data, size))
      throw std::runtime_error("shape inference returned a model that does not parse");
    return;
  }
  onnx::GraphProto changed;
  if (!parse_reply(changed, data, size)) throw std::runtime_error("shape inference returned types that do not parse");
  auto* g = proto.mutable_graph();
  const auto indices = holders->get<std::vector<int>>();
  if (static_cast<int>(indices.size()) != changed.node_size())
    throw std::runtime_error("shape inference returned a different number of subgraph holders");
  for (size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] < 0 || indices[k] >= g->node_size())
      throw std::runtime_error("shape inference returned a node index out of range");
    g->mutable_node(indices[k])
        ->mutable_attribute()
        ->Swap(changed.mutable_node(static_cast<int>(k))->mutable_attribute());
  }
  g->mutable_output()->Swap(changed.mutable_output());
  g->mutable_value_info()->Swap(changed.mutable_value_info());
}

// The file's bytes (without weight payloads unless they are written back: write_model_with_shapes), read once: this
// process and its child each parse their own copy from them.
struct ModelFile {
  std::string bytes;
};

ModelFile read_bytes(const std::string& path, bool keep_weights) {
  TimedStage stage("read");
  ModelFile file{keep_weights ? read_file(path) : read_model_without_weights(path).bytes};
  register_ort_contrib_schemas();  // before the child starts, so that it finds the registry built
  return file;
}

// The model parsed from `file` and checked for what libonnx trusts: where every view of a model starts.
onnx::ModelProto parse_checked(const ModelFile& file, const std::string& path) {
  onnx::ModelProto proto = parse_model(path, file.bytes);
  check_before_inference(proto, path);
  return proto;
}

// The user's overrides on `p`, and the NCHWc block size the machine gives it.
void apply_user_settings(PreparedModel& p, const LoadOptions& options, const std::string& path) {
  set_nchwc_block_size(nchwc_block_size_for(p.proto, options.nchwc_block_size));
  p.warnings = apply_overrides(p.proto, options.overrides, path);
}

// ONNX 1.12's inference of STFT reads a missing `onesided` as 0, while the op's default is 1 (the newer ONNX inside
// ORT 1.30 reads it so, and ONNX's own stft test expects [1,15,9,2], not [1,15,16,2]). Inference is given the default
// written out, marked so that it is taken away again after (the model stays as written: `memplan shapes`).
constexpr const char* kExplicitDefault = "memplan: the default, written out for inference";

bool write_out_stft_default(onnx::GraphProto& g) {
  bool any = false;
  auto write_out = [&](onnx::NodeProto& node) {
    if (!is_onnx_op(node, "STFT")) return;
    for (const auto& attr : node.attribute())
      if (attr.name() == "onesided") return;
    auto* onesided = node.add_attribute();
    onesided->set_name("onesided");
    onesided->set_type(onnx::AttributeProto::INT);
    onesided->set_i(1);
    onesided->set_doc_string(kExplicitDefault);
    any = true;
  };
  for_each_node(g, write_out);
  return any;
}

void take_back_written_defaults(onnx::GraphProto& g) {
  auto take_back = [](onnx::NodeProto& node) {
    auto* attrs = node.mutable_attribute();
    for (int k = attrs->size() - 1; k >= 0; --k)
      if (attrs->Get(k).doc_string() == kExplicitDefault) attrs->DeleteSubrange(k, 1);
  };
  for_each_node(g, take_back);
}

// One view of a model: its function expansion, overrides and inference, as `options` ask.
void prepare_view(PreparedModel& p, const LoadOptions& options, bool inline_functions, const std::string& path) {
  apply_user_settings(p, options, path);
  if (inline_functions && options.ort_rewrites)
    p.functions_inlined = inline_ort_functions(p.proto, p.name_counter, path);
  if (!options.infer_shapes) return;
  const bool written_out = write_out_stft_default(*p.proto.mutable_graph());
  infer(p, options, path);
  if (written_out) take_back_written_defaults(*p.proto.mutable_graph());
}

// An object a child works on, left to the child's exit to free (freeing a parsed model delays its reply by ~10 ms at
// 100k nodes); freed as usual in this process (MEMPLAN_NO_ISOLATION).
template <typename T>
struct LeftToExit {
  std::unique_ptr<T> object = std::make_unique<T>();
  ~LeftToExit() {
    if (in_isolated_child()) (void)object.release();
  }
};

// A model handed to a child (begin_prepare) that expands functions and infers shapes, not yet collected
// (end_prepare).
struct PendingModel {
  PreparedModel p;
  std::optional<IsolatedRun> inference;  // none when there is nothing to infer or expand
  bool complete_shapes = false;
};

// Memory for an inference child in proportion to the model (inference holds a few copies of it): a 1 KB model that
// makes ONNX build a tensor of rank 2^31 fails in seconds, not after filling the machine.
IsolationLimits inference_limits(const ModelFile& file) {
  return IsolationLimits{600, std::min(default_isolation_memory(), (2ULL << 30) + 40ULL * file.bytes.size())};
}

// Starts the child for the model in `file`. The child parses its own copy of the model: handed this process's parsed
// model, it would have had every page it wrote (inference adds a type to every value) copied first, at a higher cost
// than the parse. `inline_functions`: ORT's load-time function expansion (for the graph ORT runs; `memplan shapes`
// keeps the model as written). `types_as_table`: where inference kept the nodes and none holds a subgraph, the child
// sends the graph's value_info and outputs as a table (types_table.h), which this process reads in place.
PendingModel begin_prepare(const std::string& path, const ModelFile& file, const LoadOptions& options,
                           bool inline_functions, bool types_as_table = false) {
  PendingModel pending;
  pending.complete_shapes = options.complete_shapes;
  const bool expand = inline_functions && options.ort_rewrites;
  if (!expand && !options.infer_shapes) return pending;
  TimedStage stage("fork");
  // libonnx's function builders and inference trust their input: on a hostile model they can crash, allocate
  // without bound or loop. They run in a child process (isolated.h); what comes back is the expanded and inferred
  // model (or what inference changed in it) with the shape pass's report.
  pending.inference = start_isolated(
      [&file, &options, &path, inline_functions, types_as_table]() -> std::string {
        LeftToExit<PreparedModel> owner;
        PreparedModel& p = *owner.object;
        p.proto = parse_checked(file, path);
        // (before the expansion, where a call of the model's own function is still a call: it counts as known)
        std::vector<std::string> unsupported = op_support_warnings(p.proto);
        prepare_view(p, options, inline_functions, path);
        p.warnings.insert(p.warnings.begin(), unsupported.begin(), unsupported.end());
        nlohmann::json meta = {{"functions_inlined", p.functions_inlined},
                               {"name_counter", p.name_counter},
                               {"rounds", p.shapes.rounds},
                               {"evaluated_nodes", p.shapes.evaluated_nodes},
                               {"dynamic", p.shapes.dynamic},
                               {"warnings", p.warnings}};
        std::string model;
        if (types_as_table && p.functions_inlined == 0 && subgraph_holders(p.proto.graph()).empty()) {
          meta["types_table"] = true;
          model = types_table_part(p.proto.graph());
        } else {
          try {
            model = inferred_part(p.proto, p.functions_inlined > 0, meta);
          } catch (const std::runtime_error& e) {
            fail_input(path, e.what());
          }
        }
        const std::string text = dump_json(meta);
        const uint64_t n = text.size();
        return std::string(reinterpret_cast<const char*>(&n), sizeof n) + text + model;
      },
      path,
      !expand                ? "ONNX's shape inference"
      : options.infer_shapes ? "ONNX's function expansion or shape inference"
                             : "ONNX's function expansion",
      inference_limits(file));
  return pending;
}

// The three processes of a load, by priority (nice values: higher is lower). The child inferring memplan's view is
// what the command waits for (memplan builds its graph and plans from it); this process's own parse and structure
// are needed once that child is done; ORT's view only at the end, by ORT's estimate. With fewer cores than processes,
// the other two took the first child's core: at 1M nodes `plan` took 12.1 s (mean of 3), 10.9 s with these.
constexpr int kOwnParseNice = 10;
constexpr int kOrtViewNice = 15;

// Starts a second child for ORT's view of the model in `file`, from its own parse, beside the first: it returns a
// table of shapes by name (shape_table_part), at the lowest priority of the three.
IsolatedRun begin_ort_view(const std::string& path, const ModelFile& file, const LoadOptions& ort_options) {
  return start_isolated(
      [&file, &path, &ort_options]() -> std::string {
        if (in_isolated_child())
          ::setpriority(PRIO_PROCESS, 0, kOrtViewNice);  // (not in-process: MEMPLAN_NO_ISOLATION)
        LeftToExit<PreparedModel> owner;
        PreparedModel& ort = *owner.object;
        ort.proto = parse_checked(file, path);
        prepare_view(ort, ort_options, /*inline_functions=*/true, path);
        try {
          return shape_table_part(ort.proto, ort.listed_in_order);
        } catch (const std::runtime_error& e) {
          fail_input(path, e.what());
        }
      },
      path, "ONNX's shape inference (ORT's view)", inference_limits(file));
}

// This process's own copy of the model, parsed while the child works, with the user's overrides: what the child
// sends back completes it (end_prepare).
void parse_here(PendingModel& pending, const ModelFile& file, const LoadOptions& options, const std::string& path) {
  {
    TimedStage stage("parse");
    pending.p.proto = parse_checked(file, path);
  }
  TimedStage stage("overrides (--dim)");
  apply_user_settings(pending.p, options, path);
}

// The child's reply: its report (into `p`) and the bytes of what it sent after it.
std::string_view read_reply(const std::string& reply, PreparedModel& p, nlohmann::json& meta) {
  uint64_t n = 0;
  if (reply.size() < sizeof n) throw std::runtime_error("shape inference returned no result");
  std::memcpy(&n, reply.data(), sizeof n);
  if (n > reply.size() - sizeof n) throw std::runtime_error("shape inference returned a truncated result");
  meta = nlohmann::json::parse(reply.substr(sizeof n, n));
  p.shapes.rounds = meta.at("rounds").get<int>();
  p.shapes.evaluated_nodes = meta.at("evaluated_nodes").get<int>();
  p.shapes.dynamic = meta.at("dynamic").get<std::map<std::string, std::string>>();
  p.functions_inlined = meta.at("functions_inlined").get<int>();
  p.name_counter = meta.at("name_counter").get<int>();
  p.warnings = meta.at("warnings").get<std::vector<std::string>>();
  return std::string_view(reply).substr(sizeof n + n);
}

// Waits for the model from the child and completes this process's copy with it.
PreparedModel end_prepare(PendingModel& pending) {
  PreparedModel& p = pending.p;
  if (!pending.inference) return std::move(p);
  TimedStage stage(pending.complete_shapes ? "shape inference and shape pass" : "shape inference");
  std::string reply = pending.inference->finish();
  nlohmann::json meta;
  const std::string_view part = read_reply(reply, p, meta);
  if (meta.contains("types_table")) {
    reply.erase(0, static_cast<size_t>(part.data() - reply.data()));  // (the table is the rest of the reply, kept)
    p.types.emplace(std::move(reply));
  } else {
    take_inferred_part(p.proto, part.data(), part.size(), meta);
  }
  return std::move(p);
}

// Runs `work`, this process's part while the inference children work (`children`), on a thread of its own at
// kOwnParseNice (a thread's priority can be lowered, not raised back, without privileges). The calling thread waits;
// stages are timed as before (it is the only one timing them meanwhile).
void beside_inference(bool children, const std::function<void()>& work) {
  if (!children || isolation_off()) return work();
  std::exception_ptr failure;
  std::thread helper([&] {
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kOwnParseNice);
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  helper.join();
  if (failure) std::rethrow_exception(failure);
}

PreparedModel prepare(const std::string& path, const LoadOptions& options, bool inline_functions,
                      bool keep_weights = false) {
  const ModelFile file = read_bytes(path, keep_weights);
  PendingModel pending = begin_prepare(path, file, options, inline_functions);
  parse_here(pending, file, options, path);
  return end_prepare(pending);
}

// Why a sequence, map or optional has no size: what it holds is decided by the kernels at run time (ORT allocates
// a sequence's tensors as its kernels make them, outside its memory pattern). Empty for tensors.
std::string run_time_container_reason(TypeKind kind) {
  switch (kind) {
    case TypeKind::kSequence:
      return "a sequence: how many tensors it holds and their sizes are known only at run time";
    case TypeKind::kMap:
      return "a map: how many entries it holds is known only at run time";
    case TypeKind::kOptional:
      return "an optional: whether it holds a value is known only at run time";
    default:
      return {};
  }
}

// Says for each value of unknown size why: a data-dependent op or a value whose contents or size come from
// one (data-dependent values taint everything computed from them: a Shape of a NonZero result, a
// ConstantOfShape of that, an If whose condition or branch depends on them), a free dim of the graph
// inputs, an input of unknown size for another reason (named: "follows from"), or an op whose shape
// inference gave up. Subgraphs too (first, so their owner knows whether they are tainted): their inputs are
// set by the owning node at run time. `outer_tainted`: tainted values of the enclosing graphs, by name.
// Returns whether any output of `graph` is tainted.
bool explain_unknown_sizes(Graph& graph, const std::map<std::string, std::string>& dynamic,
                           const std::set<std::string>& outer_tainted = {}, const std::string& owner_taint = {}) {
  std::set<std::string> tainted = outer_tainted;
  std::vector<std::string> free_dims;
  for (ValueId id : graph.inputs)
    for (const Dim& d : graph.values[id].dims)
      if (!d.known() && !d.param.empty() && std::find(free_dims.begin(), free_dims.end(), d.param) == free_dims.end())
        free_dims.push_back(d.param);
  for (ValueId id : graph.inputs) {
    Value& v = graph.values[id];
    if (v.bytes || !v.is_tensor() || !v.unknown_reason.empty()) continue;
    if (graph.parent_node != kNoId && !owner_taint.empty()) {
      v.unknown_reason = owner_taint + " (an input of the '" + graph.parent_attribute + "' subgraph)";
      tainted.insert(v.name);
    } else if (graph.parent_node != kNoId)
      v.unknown_reason = "an input of the '" + graph.parent_attribute +
                         "' subgraph whose shape its owner sets at run time (per iteration or branch)";
    else
      v.unknown_reason = v.has_shape ? "a graph input with free dimensions; fix them with --dim or --input-shape"
                                     : "a graph input without a declared shape; give it with --input-shape";
  }
  // In a Loop body, values computed from the iteration number may change shape from one iteration to the
  // next (a slice per iteration): iteration-dependent, like data-dependent values a run-time property.
  std::set<std::string> per_iteration;
  if (graph.parent_attribute == "body" && graph.inputs.size() >= 2) {
    const Value& iteration = graph.values[graph.inputs[0]];
    if (iteration.dtype == kDTypeInt64 && (!iteration.has_shape || iteration.dims.size() <= 1))
      per_iteration.insert(iteration.name);
  }
  auto unsized = [](const Value& v) {
    return !v.bytes && v.type_kind != TypeKind::kSequence && v.type_kind != TypeKind::kMap &&
           v.type_kind != TypeKind::kOptional;
  };
  for (NodeId n : default_order(graph)) {
    const Node& node = graph.nodes[n];
    // What taints this node's outputs, if anything.
    std::string taint;
    for (const auto* list : {&node.inputs, &node.implicit_inputs})
      for (ValueId in : *list)
        if (taint.empty() && in != kNoId && tainted.count(graph.values[in].name))
          taint = "data-dependent: depends on '" + graph.values[in].name + "'";
    for (int32_t s : node.subgraphs) {
      Graph& sub = graph.subgraphs[s];
      if (explain_unknown_sizes(sub, dynamic, tainted, taint) && taint.empty())
        taint = "data-dependent: its '" + sub.parent_attribute + "' subgraph computes it from data-dependent values";
    }
    std::string iteration_taint;
    for (ValueId in : node.inputs)
      if (iteration_taint.empty() && in != kNoId && per_iteration.count(graph.values[in].name))
        iteration_taint =
            "iteration-dependent: its shape can change from one iteration of the Loop to the next (it "
            "depends on '" +
            graph.values[in].name + "', computed from the iteration number)";
    bool op_unsized = false;
    for (ValueId out : node.outputs) op_unsized = op_unsized || (out != kNoId && unsized(graph.values[out]));
    if (taint.empty() && data_dependent_op(node.domain, node.op_type) && op_unsized)
      taint = "data-dependent: its size depends on the values computed by " + describe_node(node);
    for (ValueId out : node.outputs) {
      if (out == kNoId) continue;
      Value& v = graph.values[out];
      if (!taint.empty()) tainted.insert(v.name);
      if (!iteration_taint.empty()) per_iteration.insert(v.name);
      if (!v.bytes && v.unknown_reason.empty()) v.unknown_reason = run_time_container_reason(v.type_kind);
      if (!unsized(v)) continue;
      if (auto it = dynamic.find(v.name); it != dynamic.end()) {
        v.unknown_reason = it->second;
        tainted.insert(v.name);
        continue;
      }
      if (!taint.empty() || !iteration_taint.empty()) {
        v.unknown_reason = taint.empty() ? iteration_taint : taint;
        continue;
      }
      // An input of unknown size for another reason than free dims: the cause is upstream, name it.
      for (ValueId in : node.inputs) {
        const std::string& why = in == kNoId ? std::string() : graph.values[in].unknown_reason;
        if (why.empty() || why.rfind("depends on free dimensions", 0) == 0 || why.rfind("a graph input", 0) == 0)
          continue;
        v.unknown_reason =
            why.rfind("follows from", 0) == 0 ? why : "follows from '" + graph.values[in].name + "': " + why;
        break;
      }
      if (!v.unknown_reason.empty()) continue;
      if (!free_dims.empty()) {
        std::string names;
        for (const auto& d : free_dims) names += (names.empty() ? "" : ", ") + d;
        v.unknown_reason = "depends on free dimensions of the graph inputs (" + names + "); fix them with --dim";
      } else {
        v.unknown_reason = "no shape inferred for the output of " + describe_node(node) +
                           " (neither ONNX's inference nor memplan's shape pass gave it one: no rule knows the "
                           "op, or its rule refused the node's inputs or attributes; a value_info for the output in "
                           "the model would fix it)";
      }
    }
  }
  for (ValueId out : graph.outputs)
    if (tainted.count(graph.values[out].name)) return true;
  return false;
}

// Whether a value of `graph` or of its subgraphs lacks a size: else there is nothing to explain.
bool has_unsized_value(const Graph& graph) {
  for (const Value& v : graph.values)
    if (!v.bytes) return true;
  for (const Graph& sub : graph.subgraphs)
    if (has_unsized_value(sub)) return true;
  return false;
}

// An axis-like attribute out of the range its input ranks allow: the model cannot run (attribute_ranges.h).
void check_attribute_ranges(const Graph& graph, const std::string& path) {
  for (const Node& n : graph.nodes)
    if (std::string fault = attribute_range_fault(graph, n); !fault.empty())
      fail_input(path, describe_node(n) +
                           (graph.parent_node == kNoId ? "" : " in the '" + graph.parent_attribute + "' subgraph") +
                           ": " + fault + "; the model is malformed (ONNX Runtime refuses it)");
  for (const Graph& sub : graph.subgraphs) check_attribute_ranges(sub, path);
}

int remove_casts_recursively(Graph& graph) {
  int n = remove_duplicate_casts(graph);
  for (Graph& sub : graph.subgraphs) n += remove_casts_recursively(sub);
  return n;
}

}  // namespace

LoadOptions ort_view_options(const LoadOptions& user) {
  LoadOptions o;
  o.ort_rewrites = user.ort_rewrites;
  o.complete_shapes = false;
  o.data_propagation = false;
  o.name_invented_dims = false;
  o.nchwc_block_size = user.nchwc_block_size;  // the machine's, not a property of what ORT knows at load
  return o;
}

void parse_and_infer_only(const std::string& path) {
  register_ort_contrib_schemas();
  onnx::ModelProto proto = parse_model(path, read_model_without_weights(path).bytes);
  onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0, /*enable_data_propagation=*/false);
  onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), inference);
}

namespace {

// The graph view of a prepared model, with its checks and the reasons for unknown sizes. `structure`: the graph's
// structure built from this model before inference (build_model_structure), given only where inference kept its
// nodes, inputs and outputs (load_model_and_ort_view decides).
Model finish_model(const PreparedModel& p, const LoadOptions& options, const std::string& path,
                   std::optional<Model> structure = std::nullopt) {
  const bool built = structure.has_value();
  TimedStage stage(built                        ? "graph view (types on the structure)"
                   : options.name_invented_dims ? "graph view"
                                                : "ORT view: graph view");
  Model model;
  if (built) {
    model = std::move(*structure);
    apply_model_types(model, p.proto, path, p.types ? &*p.types : nullptr);
  } else {
    model = build_model(p.proto, path);
  }
  model.ort_functions_inlined = p.functions_inlined;
  model.graph.ort_name_counter = p.name_counter;
  model.warnings.insert(model.warnings.begin(), p.warnings.begin(), p.warnings.end());
  model.shape_pass_rounds = p.shapes.rounds;
  model.shape_pass_evaluated_nodes = p.shapes.evaluated_nodes;
  check_attribute_ranges(model.graph, path);
  if (has_unsized_value(model.graph)) explain_unknown_sizes(model.graph, p.shapes.dynamic);
  if (options.ort_rewrites) model.ort_casts_removed = remove_casts_recursively(model.graph);
  return model;
}

}  // namespace

Model load_model(const std::string& path, const LoadOptions& options) {
  return finish_model(prepare(path, options, /*inline_functions=*/true), options, path);
}

ModelAndOrtView load_model_and_ort_view(const std::string& path, const LoadOptions& options) {
  const LoadOptions ort_options = ort_view_options(options);
  const ModelFile file = read_bytes(path, /*keep_weights=*/false);
  // Two children side by side, each from its own parse: memplan's view and ORT's (waited for only by ORT's estimate).
  // Inferring the second from the first child's parse, after it sent the first, saved a parse but put both
  // inferences end to end: 1.4x the time of `plan` at 100k nodes, 1.4x at 1M.
  auto child = std::make_shared<IsolatedRun>();
  {
    TimedStage stage("fork");
    *child = begin_ort_view(path, file, ort_options);
  }
  PendingModel pending = begin_prepare(path, file, options, /*inline_functions=*/true, /*types_as_table=*/true);
  std::optional<Model> structure;
  beside_inference(pending.inference.has_value(), [&] {
    parse_here(pending, file, options, path);
    // While the child infers: the graph's structure from this process's parse, used if inference kept the nodes (no
    // function expanded). Any fault found here is left for the whole build to report, after inference's, as before.
    if (pending.inference && subgraph_holders(pending.p.proto.graph()).empty()) {
      TimedStage stage("graph structure (beside inference)");
      try {
        structure = build_model_structure(pending.p.proto, path);
      } catch (const std::exception&) {  // (left unset: the whole build after inference reports it)
      }
      // The nodes the structure was built from, freed while the child works: the child's reply and the graph view's
      // types take their memory instead of fresh memory (at 1M nodes, fresh memory is much of a `plan`'s time).
      if (structure) drop_nodes_but_constants(*pending.p.proto.mutable_graph());
    }
  });
  PreparedModel prepared = end_prepare(pending);
  // The structure is used where inference kept the nodes (no function expanded) and the graph's inputs and outputs.
  // Where it is not, the whole build needs the nodes: an expansion's reply brought its own; else they are parsed
  // again (they were dropped above).
  const bool expanded = prepared.functions_inlined != 0;
  if (structure && (expanded || !same_structure(*structure, prepared.proto))) {
    if (!expanded) {
      onnx::ModelProto again = parse_checked(file, path);
      prepared.proto.mutable_graph()->mutable_node()->Swap(again.mutable_graph()->mutable_node());
    }
    structure.reset();
  }
  // The whole build reads the types from the model (the fault it reports may be a type's).
  if (!structure && prepared.types) {
    prepared.types->put_back(*prepared.proto.mutable_graph());
    prepared.types.reset();
  }
  // A failure of ORT's view (an Error, or the child's death) is not the model's: OrtShapes keeps it.
  auto ort = std::make_shared<OrtShapes>([child, path](const std::atomic<bool>& cancel) -> ShapeView {
    const std::string types = child->finish(&cancel);
    return read_shape_table(types.data(), types.size(), path);
  });
  // Read ORT's view (its table of 100k names takes tens of ms) while this thread builds the graph view.
  ort->prefetch();
  return {finish_model(prepared, options, path, std::move(structure)), ort};
}

OrtShapes::~OrtShapes() {
  cancel_ = true;
  if (prefetched_.valid()) prefetched_.wait();
}

void OrtShapes::prefetch() {
  if (!prefetched_.valid()) prefetched_ = std::async(std::launch::async, [this] { get(); });
}

const ShapeView* OrtShapes::get() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (infer_) {
    try {
      shapes_ = infer_(cancel_);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
    infer_ = nullptr;  // (and the child with it)
  }
  return shapes_ ? &*shapes_ : nullptr;
}

std::string OrtShapes::error() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::string OrtShapes::unread_warning(const std::string& model) {
  const std::string why = error();
  return why.empty() ? why
                     : model + ": ORT's view of the shapes could not be read (" + why +
                           "); the ORT figures use memplan's shapes";
}

void write_model_with_shapes(const std::string& path, const std::string& out_path, const LoadOptions& options) {
  PreparedModel p = prepare(path, options, /*inline_functions=*/false, /*keep_weights=*/true);
  build_model(p.proto, path);  // the same structural checks as every load
  std::string bytes;
  if (!p.proto.SerializeToString(&bytes)) fail_input(out_path, "cannot serialise the model (over 2 GiB?)");
  write_file_atomically(out_path, bytes);
}

void write_model_with_node_order(const std::string& path, const std::string& out_path,
                                 const std::map<std::string, size_t>& position_by_output) {
  onnx::ModelProto proto = parse_model(path, read_file(path));
  auto& nodes = *proto.mutable_graph()->mutable_node();
  const size_t n = static_cast<size_t>(nodes.size());
  // Sort keys: Constant nodes first, then by position; unplaced nodes just before their first placed consumer.
  constexpr double kUnplaced = -2;
  std::vector<double> key(n, kUnplaced);
  std::map<std::string, size_t> producer_of;
  for (size_t i = 0; i < n; ++i) {
    const auto& node = nodes[static_cast<int>(i)];
    for (const auto& out : node.output()) producer_of[out] = i;
    if (is_onnx_op(node, "Constant")) key[i] = -1;
    for (const auto& out : node.output()) {
      auto it = position_by_output.find(out);
      if (it != position_by_output.end() && (key[i] < 0 || static_cast<double>(it->second) < key[i]))
        key[i] = static_cast<double>(it->second);
    }
  }
  std::vector<std::vector<size_t>> consumers(n);  // (a node's consumers come after it: the file is topological)
  for (size_t j = 0; j < n; ++j)
    for (const auto& in : nodes[static_cast<int>(j)].input())
      if (auto it = producer_of.find(in); it != producer_of.end() && it->second != j)
        consumers[it->second].push_back(j);
  // Unplaced nodes, latest in the file first (so chains of them find their consumers' keys): before the first
  // consumer, after every placed producer.
  for (size_t i = n; i-- > 0;) {
    if (key[i] != kUnplaced) continue;
    double first_consumer = static_cast<double>(position_by_output.size()) + 1;
    for (size_t j : consumers[i]) first_consumer = std::min(first_consumer, key[j]);
    key[i] = first_consumer - 1e-3 * static_cast<double>(n - i) / static_cast<double>(n + 1);
  }
  std::vector<size_t> sorted(n);
  for (size_t i = 0; i < n; ++i) sorted[i] = i;
  std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
  google::protobuf::RepeatedPtrField<onnx::NodeProto> reordered;
  for (size_t i : sorted) *reordered.Add() = nodes[static_cast<int>(i)];
  nodes.Swap(&reordered);
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) fail_input(out_path, "cannot serialise the model (over 2 GiB?)");
  write_file_atomically(out_path, bytes);
}

}  // namespace memplan::onnx_io
