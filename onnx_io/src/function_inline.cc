#include "function_inline.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <unordered_map>
#include <vector>

#include "memplan/error.h"
#include "memplan/text_escape.h"
#include "proto_model.h"
#include "shape_pass.h"

namespace memplan::onnx_io {
namespace {

using TypeMap = std::unordered_map<std::string, onnx::TypeProto>;

void collect_types(const onnx::GraphProto& g, TypeMap& types) {
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list)
      if (vi.has_type()) types[vi.name()] = vi.type();
  for (const auto& t : g.initializer()) {
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
    types.emplace(t.name(), type);
  }
  for (const auto& n : g.node()) for_each_subgraph(n, [&](const onnx::GraphProto& sub) { collect_types(sub, types); });
}

// Every value's type as ONNX's inference sees it (the bodies of context-dependent functions depend on
// their inputs' types). Inference failures leave types unknown; the body builder then does without.
TypeMap infer_types(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  // In topological order: ONNX's inference walks the list, and expanded bodies sit at its end.
  copy.mutable_graph()->clear_node();
  std::vector<bool> listed(model.graph().node_size(), false);
  for (int i : topological_order(model.graph())) {
    *copy.mutable_graph()->add_node() = model.graph().node(i);
    listed[i] = true;
  }
  for (int i = 0; i < model.graph().node_size(); ++i)
    if (!listed[i]) *copy.mutable_graph()->add_node() = model.graph().node(i);
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
  }
  TypeMap types;
  collect_types(copy.graph(), types);
  return types;
}

// ORT's Graph::GenerateNodeName: the base name if no node has it and it was not generated before, else
// base + "_token_" + the graph's name counter (shared with value names).
struct NameGenerator {
  std::set<std::string> taken;
  int counter = 0;
  static NameGenerator of(const onnx::GraphProto& g) {  // the names g's nodes already have
    NameGenerator names;
    for (const auto& n : g.node()) names.taken.insert(n.name());
    return names;
  }
  std::string node_name(const std::string& base) {
    std::string name = base;
    while (taken.count(name)) name = base + "_token_" + std::to_string(counter++);
    taken.insert(name);
    return name;
  }
};

// ORT's function_utils Inliner: binds the body's formal inputs and outputs to the call's actual names and
// gives every other name (and every named node) the call's unique prefix; attribute references take the
// call node's attribute values.
class Specializer {
 public:
  Specializer(std::string prefix, const onnx::NodeProto& call) : prefix_(std::move(prefix)), call_(call) {
    scopes_.emplace_back();
  }

  void run(onnx::FunctionProto& body) {
    bind(*body.mutable_input(), call_.input(), /*outputs=*/false);
    bind(*body.mutable_output(), call_.output(), /*outputs=*/true);
    for (auto& n : *body.mutable_node()) transform(n);
  }

 private:
  std::string unique(const std::string& name) {
    std::string renamed = prefix_ + "_" + name;
    scopes_.back()[name] = renamed;
    return renamed;
  }

  void rename(std::string& name) {
    if (name.empty()) return;
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto hit = it->find(name); hit != it->end()) {
        name = hit->second;
        return;
      }
    name = unique(name);
  }

  void bind(google::protobuf::RepeatedPtrField<std::string>& formals,
            const google::protobuf::RepeatedPtrField<std::string>& actuals, bool outputs) {
    auto& scope = scopes_.back();
    for (int i = 0; i < formals.size(); ++i) {
      std::string& formal = *formals.Mutable(i);
      std::string as = i < actuals.size() ? actuals.Get(i) : std::string();
      // A missing optional output still needs a name inside the body; a missing input stays absent.
      if (as.empty() && outputs) as = prefix_ + "_" + formal;
      scope[formal] = as;
      if (!as.empty()) formal = as;
    }
  }

  void transform(onnx::NodeProto& n) {
    if (!n.name().empty()) n.set_name(prefix_ + "_" + n.name());
    for (auto& x : *n.mutable_input()) rename(x);
    for (auto& y : *n.mutable_output()) rename(y);
    auto& attributes = *n.mutable_attribute();
    for (int i = 0; i < attributes.size();) {
      auto& attr = *attributes.Mutable(i);
      if (!attr.ref_attr_name().empty()) {
        const onnx::AttributeProto* value = nullptr;
        for (const auto& a : call_.attribute())
          if (a.name() == attr.ref_attr_name()) value = &a;
        if (!value) {
          attributes.DeleteSubrange(i, 1);
          continue;
        }
        const std::string name = attr.name();
        attr = *value;
        attr.set_name(name);
      }
      if (attr.has_g()) transform(*attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) transform(g);
      ++i;
    }
  }

  void transform(onnx::GraphProto& g) {
    scopes_.emplace_back();
    for (auto& x : *g.mutable_input()) x.set_name(unique(x.name()));
    for (auto& y : *g.mutable_output()) y.set_name(unique(y.name()));
    for (auto& n : *g.mutable_node()) transform(n);
    scopes_.pop_back();
  }

  std::string prefix_;
  const onnx::NodeProto& call_;
  std::vector<std::map<std::string, std::string>> scopes_;
};

// The body ORT would inline for `node`, or false when its schema has none.
bool function_body(const onnx::NodeProto& node, int position, int opset, const TypeMap& types,
                   onnx::FunctionProto& body) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
  if (!schema) return false;
  if (schema->HasFunction()) {
    body = *schema->GetFunction();
    return true;
  }
  if (!schema->HasContextDependentFunction()) return false;
  std::vector<onnx::TypeProto> input_types;
  for (const auto& in : node.input()) {
    auto it = in.empty() ? types.end() : types.find(in);
    input_types.push_back(it == types.end() ? onnx::TypeProto() : it->second);
  }
  onnx::FunctionBodyBuildContextImpl context(node, input_types);
  try {
    return schema->BuildContextDependentFunction(context, body);
  } catch (const std::exception& e) {
    // (a SequenceMap given a tensor where its body needs a sequence: ORT refuses such a model at load, too)
    throw Error(ExitCode::kBadInput, describe_node(node, position) +
                                         ": ONNX cannot build the function body ONNX Runtime inlines for it (" +
                                         terminal_text(e.what()) + "); the model is malformed");
  }
}

// The model's own functions (ModelProto.functions) by domain and name. ORT inlines every call of one when it loads
// the model, before it partitions and at every optimization level (InlineFunctionsAOT), with the same naming as the
// function ops it expands after partitioning.
using LocalFunctions = std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*>;

LocalFunctions local_functions(const onnx::ModelProto& model) {
  LocalFunctions found;
  for (const auto& f : model.functions()) found.emplace(std::make_pair(domain_key(f.domain()), f.name()), &f);
  return found;
}

const onnx::FunctionProto* local_function(const onnx::NodeProto& n, const LocalFunctions& local) {
  if (local.empty()) return nullptr;
  auto it = local.find(std::make_pair(domain_key(n.domain()), n.op_type()));
  return it == local.end() ? nullptr : it->second;
}

// Whether `n` is expanded in this phase: a call of a model-local function (`local` given), else one of the ai.onnx
// function ops ORT has no kernel for.
bool is_candidate(const onnx::NodeProto& n, const LocalFunctions* local) {
  return local ? local_function(n, *local) != nullptr
               : is_default_domain(n.domain()) && ort_inlined_ops().count(n.op_type()) != 0;
}

// One round over one graph (its subgraphs first, as ORT does): expands every candidate node of the phase.
int expand_graph(onnx::GraphProto& g, int opset, const TypeMap& types, NameGenerator& names,
                 const LocalFunctions* local) {
  int expanded = 0;
  for (auto& n : *g.mutable_node())
    for_each_subgraph(n, [&](onnx::GraphProto& sub) {
      NameGenerator sub_names = NameGenerator::of(sub);
      expanded += expand_graph(sub, opset, types, sub_names, local);
    });
  std::vector<onnx::NodeProto> kept, appended;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    onnx::FunctionProto body;
    if (!is_candidate(n, local)) {
      kept.push_back(n);
      continue;
    }
    if (local) {
      body = *local_function(n, *local);
    } else if (!function_body(n, i, opset, types, body)) {
      kept.push_back(n);
      continue;
    }
    Specializer(names.node_name("_inlfunc_" + n.op_type()), n).run(body);
    for (auto& bn : *body.mutable_node()) appended.push_back(std::move(bn));
    ++expanded;
  }
  if (!expanded) return 0;
  g.clear_node();
  for (auto& n : kept) *g.add_node() = std::move(n);
  for (auto& n : appended) *g.add_node() = std::move(n);
  return expanded;
}

bool has_candidates(const onnx::GraphProto& g, const LocalFunctions* local) {
  bool found = false;
  for (const auto& n : g.node()) {
    found = found || is_candidate(n, local);
    for_each_subgraph(n, [&](const onnx::GraphProto& sub) { found = found || has_candidates(sub, local); });
  }
  return found;
}

}  // namespace

const std::set<std::string>& ort_inlined_ops() {
  static const std::set<std::string> ops = {
      "Bernoulli", "CastLike", "HardSwish", "NegativeLogLikelihoodLoss", "SequenceMap", "SoftmaxCrossEntropyLoss",
      // (ONNX ops newer than libonnx 1.12: their bodies are memplan's, newer_onnx_schemas.cc)
      "CenterCropPad", "GroupNormalization", "Mish", "Swish"};
  return ops;
}

int inline_ort_functions(onnx::ModelProto& model, int& name_counter, const std::string& path) try {
  int opset = 0;
  for (const auto& op : model.opset_import())
    if (is_default_domain(op.domain())) opset = static_cast<int>(op.version());
  name_counter = 0;
  const LocalFunctions local = local_functions(model);
  const bool calls_local = !local.empty() && has_candidates(model.graph(), &local);
  // (most models: no table of every node's name to make)
  if (!calls_local && !has_candidates(model.graph(), nullptr)) return 0;
  NameGenerator names = NameGenerator::of(model.graph());
  int total = 0;
  // The model's own functions first, round after round (a body may call another), as ORT inlines them before it
  // partitions. (A function that calls itself, which ONNX forbids, stops after 64 rounds, its calls left.)
  for (int round = 0; calls_local && round < 64 && has_candidates(model.graph(), &local); ++round)
    total += expand_graph(*model.mutable_graph(), opset, {}, names, &local);
  if (calls_local && !has_candidates(model.graph(), &local)) model.clear_functions();
  // Then the function ops no provider claims. A body may call another function (SoftmaxCrossEntropyLoss calls
  // NegativeLogLikelihoodLoss): ORT partitions again after each round and inlines what is still unclaimed.
  for (int round = 0; round < 16 && has_candidates(model.graph(), nullptr); ++round) {
    const int expanded = expand_graph(*model.mutable_graph(), opset, infer_types(model), names, nullptr);
    if (!expanded) break;
    total += expanded;
  }
  name_counter = names.counter;
  return total;
} catch (const Error& e) {
  fail_input(path, e.what());
}

}  // namespace memplan::onnx_io
