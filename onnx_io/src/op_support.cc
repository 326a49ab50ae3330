#include "op_support.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "memplan/text_escape.h"
#include "proto_model.h"

namespace memplan::onnx_io {
namespace {

enum class Support { kKnown, kDomainNotImported, kNewerThanOpset, kUnknown };

struct OpFinding {
  Support support = Support::kKnown;
  int64_t opset = 0;  // the model's import of the op's domain
  int since = 0;      // kNewerThanOpset: the first opset that has the op
  int nodes = 0;
  std::string first_node;
};

std::string domain_label(const std::string& domain) {
  return domain.empty() ? "ai.onnx" : domain;
}

class OpSupportCheck {
 public:
  explicit OpSupportCheck(const onnx::ModelProto& model) {
    for (const auto& op : model.opset_import()) opsets_[domain_key(op.domain())] = op.version();
    if (model.opset_import_size() == 0) opsets_[""] = 1;  // (IR version 1 and 2 models import nothing)
    for (const auto& f : model.functions()) local_.emplace(domain_key(f.domain()), f.name());
  }

  void graph(const onnx::GraphProto& g) {
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      if (!n.op_type().empty()) node(n, i);
      for_each_subgraph(n, [&](const onnx::GraphProto& sub) { graph(sub); });
    }
  }

  std::vector<std::string> warnings() const {
    std::vector<std::string> out;
    for (const auto& [domain, version] : opsets_) {
      const int ort = ort_newest_opset(domain);
      if (ort > 0 && version > ort)
        out.push_back("the model imports " + domain_label(domain) + " opset " + std::to_string(version) +
                      ", and ONNX Runtime 1.30 refuses to load it (it loads " + domain_label(domain) + " up to opset " +
                      std::to_string(ort) + ")");
      if (const int known = newest_known_opset(domain); known > 0 && version > known)
        out.push_back("memplan's shape rules know " + domain_label(domain) + " up to opset " + std::to_string(known) +
                      " and the model imports opset " + std::to_string(version) +
                      ": an op whose definition changed since is read by the newest definition memplan has");
    }
    for (const auto& [key, f] : findings_) {
      if (f.support == Support::kKnown) continue;
      const std::string op = terminal_text(key.first.empty() ? key.second : key.first + "." + key.second);
      const std::string who =
          f.first_node + (f.nodes > 1 ? " and " + std::to_string(f.nodes - 1) + " other " + op + " node(s)" : "");
      switch (f.support) {
        case Support::kDomainNotImported:
          out.push_back(who + ": the model imports no opset of domain '" + terminal_text(key.first) +
                        "'; ONNX Runtime refuses it ('No opset import for domain') and no shape rule applies");
          break;
        case Support::kNewerThanOpset:
          out.push_back(who + ": " + domain_label(key.first) + " has " + terminal_text(key.second) + " from opset " +
                        std::to_string(f.since) + " and the model imports opset " + std::to_string(f.opset) +
                        "; ONNX Runtime refuses it ('No Op registered for " + terminal_text(key.second) +
                        " with domain_version of " + std::to_string(f.opset) + "') and no shape rule applies");
          break;
        default:
          out.push_back(who + ": memplan knows no op " + op + " (ONNX's ops to opset " +
                        std::to_string(newest_known_opset("")) +
                        ", ONNX Runtime's contrib ops): its outputs' sizes come only from the model's value_info, "
                        "and ONNX Runtime runs a custom op only with a custom-op library that registers it");
      }
    }
    return out;
  }

 private:
  // The newest opset of `domain` ONNX's registry holds (with memplan's newer and contrib schemas); 0 for none.
  static int newest_known_opset(const std::string& domain) {
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto it = ranges.find(domain);
    return it == ranges.end() ? 0 : it->second.second;
  }

  void node(const onnx::NodeProto& n, int position) {
    // (nodes of one op follow one another: most lookups are the last one's)
    if (!last_ || n.op_type() != last_->first.second || domain_key(n.domain()) != last_->first.first) {
      auto key = std::make_pair(domain_key(n.domain()), n.op_type());
      auto it = findings_.find(key);
      if (it == findings_.end()) it = findings_.emplace(key, look_up(key.first, key.second)).first;
      last_ = &*it;
    }
    OpFinding& f = last_->second;
    if (f.support == Support::kKnown) return;
    if (f.nodes++ == 0) f.first_node = describe_node(n, position);
  }

  OpFinding look_up(const std::string& domain, const std::string& op) const {
    OpFinding f;
    auto opset = opsets_.find(domain);
    if (opset == opsets_.end()) {
      f.support = local_.count({domain, op}) ? Support::kKnown : Support::kDomainNotImported;
      return f;
    }
    f.opset = opset->second;
    // (a hostile model's import may be negative or past int: the walk below is bounded by the op's first opset)
    const int version = static_cast<int>(std::clamp<int64_t>(opset->second, 0, INT_MAX));
    if (local_.count({domain, op}) || onnx::OpSchemaRegistry::Schema(op, version, domain)) return f;
    if (const auto* newest = onnx::OpSchemaRegistry::Schema(op, INT_MAX, domain)) {
      f.support = Support::kNewerThanOpset;
      f.since = newest->since_version();
      // (the first version past the import: the oldest schema newer than it)
      for (int v = version + 1; v < newest->since_version(); ++v)
        if (const auto* s = onnx::OpSchemaRegistry::Schema(op, v, domain)) {
          f.since = s->since_version();
          break;
        }
      return f;
    }
    f.support = Support::kUnknown;
    return f;
  }

  std::map<std::string, int64_t> opsets_;
  std::set<std::pair<std::string, std::string>> local_;
  std::map<std::pair<std::string, std::string>, OpFinding> findings_;
  std::pair<const std::pair<std::string, std::string>, OpFinding>* last_ = nullptr;
};

}  // namespace

int ort_newest_opset(const std::string& domain) {
  static const std::map<std::string, int> newest = {{"", 26},
                                                    {"ai.onnx.ml", 5},
                                                    {"ai.onnx.training", 1},
                                                    {"ai.onnx.preview.training", 1},
                                                    {"com.microsoft", 1},
                                                    {"com.microsoft.nchwc", 1},
                                                    {"com.microsoft.experimental", 1},
                                                    {"org.pytorch.aten", 1}};
  auto it = newest.find(domain);
  return it == newest.end() ? 0 : it->second;
}

std::vector<std::string> op_support_warnings(const onnx::ModelProto& model) {
  OpSupportCheck check(model);
  check.graph(model.graph());
  return check.warnings();
}

}  // namespace memplan::onnx_io
