#include "memplan/memplan.h"

#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "memplan/api/internal.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/file_kind.h"
#include "memplan/partition/device.h"
#include "memplan/partition/partition.h"
#include "memplan/plan_doc/recorded_options.h"
#include "memplan/planner/plan_io.h"
#include "memplan/suggest.h"
#include "memplan/validate/validate.h"

namespace memplan {
namespace api {

partition::PartitionRequest partition_request(const PlanSettings& settings) {
  partition::PartitionRequest r;
  auto d = partition::parse_device(settings.device);
  if (!d) fail_usage("--device '" + settings.device + "' is not a device; use cpu, gpu or gpu:N");
  r.device = *d;
  if (settings.streams_per_device < 1 || settings.streams_per_device > 64)
    fail_usage("--streams-per-device " + std::to_string(settings.streams_per_device) + ": use 1 to 64");
  r.placement_file = settings.placement;
  r.op_properties_file = settings.op_properties;
  r.config_file = settings.partition_config;
  r.streams_per_device = settings.streams_per_device;
  r.order = parse_order_kind(settings.order);
  r.order_time_budget_s = settings.time_budget_s;
  return r;
}

planner::PlanRequest plan_request(const PlanSettings& settings) {
  planner::PlanRequest request;
  auto& layout = request.layout;
  if (!arena::parse_algorithm(settings.arena_algorithm, layout.solve.algorithm))
    fail_usage("--arena-algorithm '" + settings.arena_algorithm + "': use " + arena::algorithm_names() + "." +
               did_you_mean(settings.arena_algorithm, [] {
                 std::vector<std::string> names;
                 for (const auto& p : arena::packers()) names.push_back(p.name);
                 return names;
               }()));
  const uint64_t align = settings.alignment;
  if (align == 0 || (align & (align - 1)) || align > (uint64_t{1} << 30))
    fail_usage("--align must be a power of two, at most 1073741824 (1 GiB)");
  layout.alignment = align;
  layout.pack_outputs = settings.pack_outputs;
  layout.solve.time_budget_s = settings.time_budget_s;
  layout.solve.show_progress = false;
  if (settings.reuse != "memplan" && settings.reuse != "ort" && settings.reuse != "none")
    fail_usage("--reuse '" + settings.reuse + "': use memplan, ort or none");
  if (!settings.like.empty()) {
    if (settings.like != "ort") fail_usage("--like '" + settings.like + "': the only runtime memplan imitates is ort");
    if (settings.reuse != "memplan" || settings.arena_algorithm != "auto")
      fail_usage("--like ort sets the reuse rules and the layout; leave out --reuse, --no-reuse and --arena-algorithm");
    request.like_ort = true;
  }
  request.plan.reuse = settings.reuse == "none"  ? planner::ReuseMode::kNone
                       : settings.reuse == "ort" ? planner::ReuseMode::kOrt
                                                 : planner::ReuseMode::kMemplan;
  request.partition = partition_request(settings);
  return request;
}

namespace {

// A reason with the names in it taken out: quoted ('/NonZero_7') and the positions of unnamed nodes (#7). Reasons that
// differ only in which value or node they name share it, so 180 NonZero outputs make one line, not 180.
std::string reason_template(const std::string& why, std::string* first_name) {
  std::string out;
  for (size_t i = 0; i < why.size();) {
    size_t end = std::string::npos;
    if (why[i] == '\'') {
      end = why.find('\'', i + 1);
      if (end != std::string::npos) ++end;
    } else if (why[i] == '#' && i + 1 < why.size() && std::isdigit(static_cast<unsigned char>(why[i + 1]))) {
      end = i + 1;
      while (end < why.size() && std::isdigit(static_cast<unsigned char>(why[end]))) ++end;
    }
    if (end == std::string::npos) {
      out += why[i++];
      continue;
    }
    if (first_name->empty()) *first_name = why.substr(i, end - i);
    out += "'...'";
    i = end;
  }
  return out;
}

// "12 because <cause>; 3 because <cause>", the largest groups first and at most kShown of them, and the --dim options
// that would fix free dims. Causes naming different values or nodes in the same words are one group, shown with the
// first of them and how many more there are.
std::string unsized_causes(const Graph& g, const std::vector<ValueId>& unsized) {
  constexpr size_t kShown = 6;
  struct Group {
    size_t values = 0;
    std::string first;            // the first reason in full
    std::set<std::string> names;  // the distinct first quoted names
  };
  std::map<std::string, Group> groups;
  for (ValueId id : unsized) {
    const Value& v = g.values[id];
    std::string why = v.unknown_reason.empty() ? "no reason recorded" : v.unknown_reason;
    if (why.rfind("follows from '", 0) == 0) why = why.substr(why.find("': ") + 3);
    std::string name;
    Group& grp = groups[reason_template(why, &name)];
    if (grp.first.empty() || why < grp.first) grp.first = why;
    ++grp.values;
    if (!name.empty()) grp.names.insert(name);
  }
  std::vector<const Group*> order;
  for (const auto& [key, grp] : groups) order.push_back(&grp);
  std::stable_sort(order.begin(), order.end(), [](const Group* a, const Group* b) { return a->values > b->values; });
  std::string text;
  for (size_t i = 0; i < std::min(order.size(), kShown); ++i) {
    const Group& grp = *order[i];
    text += (text.empty() ? "" : "; ") + std::to_string(grp.values) + " because " + grp.first;
    if (grp.names.size() > 1)
      text +=
          " (and likewise " + std::to_string(grp.names.size() - 1) + (grp.names.size() == 2 ? " other)" : " others)");
  }
  if (order.size() > kShown) {
    size_t rest = 0;
    for (size_t i = kShown; i < order.size(); ++i) rest += order[i]->values;
    text += "; " + std::to_string(rest) + " for " + std::to_string(order.size() - kShown) + " other reasons";
  }
  std::string dims;
  for (ValueId id : g.inputs)  // the planned graph's inputs are the model's
    for (const Dim& d : g.values[id].dims)
      if (!d.known() && !d.param.empty() && dims.find(" --dim " + d.param + "=") == std::string::npos)
        dims += " --dim " + d.param + "=...";
  return text + (dims.empty() ? "" : "; give" + dims);
}

}  // namespace

std::string incomplete_plan_reasons(const planner::PlannedModel& planned) {
  std::string what;
  if (!planned.unsized.empty())
    what = std::to_string(planned.unsized.size()) + " values the plan must allocate have no known size (" +
           unsized_causes(planned.graph(), planned.unsized) + ")";
  if (const auto& body = planned.unsized_in_bodies; !body.empty()) {
    std::string some;
    for (size_t i = 0; i < std::min<size_t>(body.size(), 3); ++i) some += (i ? ", " : "") + body[i];
    what += (what.empty() ? "" : "; and ") + std::to_string(body.size()) +
            " values inside If/Loop/Scan bodies have no known size (" + some + (body.size() > 3 ? ", ..." : "") + ")";
  }
  return what;
}

onnx_io::LoadOptions load_options(const ShapeSettings& shapes) {
  onnx_io::LoadOptions options;
  options.overrides.dims = shapes.dims;
  options.overrides.input_shapes = shapes.input_shapes;
  options.overrides.trip_counts = shapes.trip_counts;
  for (const auto& [name, v] : shapes.dims)
    if (v < 0) fail_usage("--dim " + name + ": '" + std::to_string(v) + "' is negative");
  for (const auto& [name, dims] : shapes.input_shapes)
    for (int64_t v : dims)
      if (v < 0) fail_usage("--input-shape " + name + ": '" + std::to_string(v) + "' is negative");
  for (const auto& [name, v] : shapes.trip_counts)
    if (v < 0) fail_usage("--trip-count " + name + ": '" + std::to_string(v) + "' is negative");
  return options;
}

}  // namespace api

namespace {

std::string join_dims(const std::vector<int64_t>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text;
}

// The settings a plan records (its "options"), in the command line's terms.
std::map<std::string, std::string> recorded_options(const PlanSettings& s) {
  plan_doc::RecordedOptions o;
  o.device = s.device;
  o.order = s.order;
  o.streams_per_device = s.streams_per_device;
  o.arena_algorithm = s.arena_algorithm;
  o.alignment = s.alignment;
  o.pack_outputs = s.pack_outputs;
  o.partition_config = s.partition_config;
  for (const auto& [name, v] : s.shapes.dims) o.dims[name] = std::to_string(v);
  for (const auto& [name, dims] : s.shapes.input_shapes) o.input_shapes[name] = join_dims(dims);
  for (const auto& [name, v] : s.shapes.trip_counts) o.trip_counts[name] = std::to_string(v);
  o.allow_unknown_sizes = s.allow_unknown_sizes;
  o.like = s.like;
  return plan_doc::options_object(o);
}

}  // namespace

std::string version() {
  return MEMPLAN_VERSION;
}

PlanResult make_plan(const std::string& model_path, const PlanSettings& settings) {
  planner::PlanRequest request = api::plan_request(settings);
  const onnx_io::LoadOptions options = api::load_options(settings.shapes);
  PlanResult result;
  const std::string sha256 = planner::sha256_file_hex(model_path);
  onnx_io::ModelAndOrtView both = onnx_io::load_model_and_ort_view(model_path, options);
  Model& model = both.model;
  for (const auto& w : model.warnings) result.warnings.push_back(model_path + ": " + w);
  request.ort_shapes = [ort = both.ort_shapes] { return ort->get(); };
  const planner::PlannedModel planned = planner::plan_model(std::move(model), request);
  if (std::string warning = both.ort_shapes->unread_warning(model_path); !warning.empty())
    result.warnings.push_back(std::move(warning));
  result.warnings.insert(result.warnings.end(), planned.parts.warnings.begin(), planned.parts.warnings.end());
  if (!planned.complete() && !settings.allow_unknown_sizes)
    fail_input(model_path, "the plan would be incomplete: " + api::incomplete_plan_reasons(planned) +
                               ". Its totals would leave them out. Fix the sizes, or allow unknown sizes "
                               "(allow_unknown_sizes) to get a plan marked incomplete");

  planner::PlanContext ctx{planned.graph(), planned.plan, model_path, sha256, {}, &planned.layout, &planned.subgraphs};
  ctx.options = recorded_options(settings);
  ctx.totals = &planned.totals;
  if (planned.ort_rules) ctx.ort_rules = &*planned.ort_rules;
  result.json = planner::plan_to_json(ctx);
  result.complete = planned.complete();
  result.nodes = planned.graph().nodes.size();
  result.values = planned.graph().values.size();
  result.streams = planned.parts.partition.streams.size();
  for (const DeviceTotal& t : planned.totals)
    result.devices.push_back({t.device, t.total(), t.activations, t.outputs, t.weights, t.inputs, t.complete()});
  for (const auto& a : planned.layout.arenas)
    result.arenas.push_back({a.name, partition::device_name(a.location), a.purpose, a.bytes, a.lower_bound, a.algorithm,
                             a.optimal, a.buffers});
  return result;
}

PartitionResult make_partition(const std::string& model_path, const PlanSettings& settings) {
  const partition::PartitionRequest request = api::partition_request(settings);
  const Model model = onnx_io::load_model(model_path, api::load_options(settings.shapes));
  PartitionResult result;
  for (const auto& w : model.warnings) result.warnings.push_back(model_path + ": " + w);
  const partition::PartitionedModel parts = partition::partition_model(model, request);
  result.warnings.insert(result.warnings.end(), parts.warnings.begin(), parts.warnings.end());
  result.config_json = partition::write_partition_config(parts.placed.graph, parts.partition);
  result.nodes = parts.placed.graph.nodes.size();
  result.streams = parts.partition.streams.size();
  return result;
}

Validation check_plan(const std::string& plan_json, const std::string& plan_name, const ValidateSettings& settings) {
  return api::check_plan_doc(plan_doc::read_plan_doc(plan_json, plan_name), settings);
}

Validation check_plan_file(const std::string& path, const ValidateSettings& settings) {
  return api::check_plan_doc(plan_doc::read_plan_file(path), settings);
}

namespace api {
Validation check_plan_doc(const plan_doc::PlanDoc& doc, const ValidateSettings& settings) {
  const validate::Report report = validate::validate_plan(doc);
  Validation result;
  for (const auto& v : report.violations) result.violations.push_back({v.check, v.message});
  result.values_checked = report.values_checked;
  result.uses_checked = report.uses_checked;
  result.regions_checked = report.regions_checked;
  result.seconds = report.seconds;
  // An incomplete plan is never silently valid: its arenas leave values out.
  const auto unsized = plan_doc::unsized_allocations(doc);
  if (!unsized.empty()) {
    result.incomplete = std::to_string(unsized.size()) + " values the plan must allocate have no known size (";
    for (size_t i = 0; i < unsized.size() && i < 3; ++i)
      result.incomplete += (i ? ", '" : "'") + doc.values[unsized[i]].name + "'";
    result.incomplete += unsized.size() > 3 ? ", ...)" : ")";
    result.incomplete += ", so its arenas and totals leave them out";
    if (!settings.allow_unknown_sizes)
      result.violations.insert(result.violations.begin(),
                               {"incomplete", result.incomplete + "; plan with the sizes fixed, or accept it with "
                                                                  "--allow-unknown-sizes"});
  }
  if (settings.model_path.empty()) return result;
  // Cross-check against the model: the same file, and every value's name and size.
  const std::string& model_path = settings.model_path;
  if (planner::sha256_file_hex(model_path) != doc.model_sha256)
    result.violations.push_back(
        {"model", "the plan was made from a different file than " + model_path + " (sha256 differs)"});
  // Load it with the shape options the plan was made with.
  onnx_io::LoadOptions options;
  const plan_doc::RecordedOptions recorded = plan_doc::read_recorded_options(doc.options);
  for (const auto& [name, value] : recorded.dims)
    options.overrides.dims.insert(onnx_io::parse_dim_override(name + "=" + value));
  for (const auto& [name, value] : recorded.input_shapes)
    options.overrides.input_shapes.insert(onnx_io::parse_input_shape(name + "=" + value));
  for (const auto& [name, value] : recorded.trip_counts)
    options.overrides.trip_counts.insert(onnx_io::parse_trip_count(name + "=" + value));
  const Model model = onnx_io::load_model(model_path, options);
  std::map<std::string, const Value*> by_name;
  for (const Value& v : model.graph.values) by_name[v.name] = &v;
  size_t matched = 0;
  for (const auto& v : doc.values) {
    auto it = by_name.find(v.name);
    if (it == by_name.end()) continue;  // copy nodes' values exist only in the plan
    ++matched;
    if (it->second->bytes != v.bytes)
      result.violations.push_back(
          {"model", "value '" + v.name + "' has " + (v.bytes ? std::to_string(*v.bytes) : "unknown") +
                        " bytes in the plan but " +
                        (it->second->bytes ? std::to_string(*it->second->bytes) : "unknown") + " in the model"});
  }
  if (matched == 0) result.violations.push_back({"model", "no value of the plan is in " + model_path});
  return result;
}
}  // namespace api

std::string inspect(const std::string& path, const ShapeSettings& shapes, size_t top) {
  const FileKind kind = sniff_file_kind(read_file_head(path, 4096));
  if (kind == FileKind::kPlan || kind == FileKind::kOtherJson) {
    const plan_doc::PlanDoc doc = plan_doc::read_plan_file(path);
    return api::inspect_plan_json(path, doc, plan_doc::analyse(doc), top);
  }
  const Model model = onnx_io::load_model(path, api::load_options(shapes));
  return api::inspect_model_json(model, OrderKind::kDefault, /*values=*/false);
}

void save(const std::string& path, const std::string& text) {
  write_file_atomically(path, text);
}

}  // namespace memplan
