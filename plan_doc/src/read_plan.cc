// read_plan_doc: a plan file into a PlanDoc, in one forward pass over the text with simdjson's On-Demand parser.
// A 1M-value plan is 800 MB of JSON: a tree of it (nlohmann) took 15 s and 5 GB, simdjson's DOM 2.4 s and 3 GB;
// reading each field once, where it lies, takes about 1 s and the text's size in memory. nlohmann parses again only
// to word a syntax error. Fields the reader does not know (shape, notes, totals) are skipped.
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <iterator>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/file_kind.h"
#include "memplan/json_input.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/text_escape.h"

namespace memplan::plan_doc {

namespace {

namespace od = simdjson::ondemand;

// A field that is missing or of the wrong type or range: read_plan_doc names the section and field.
struct FieldError {
  std::string what;
};

// JSON simdjson could not read (a syntax error, a number out of every range): worded with nlohmann's help.
struct Malformed {
  simdjson::error_code code;
};

template <typename T>
T take(simdjson::simdjson_result<T>&& r) {
  T out;
  if (const simdjson::error_code code = std::move(r).get(out)) throw Malformed{code};
  return out;
}

// Where the reader is, worded only for an error (a 1M-value plan would otherwise build 2M strings).
struct Where {
  // read_plan_summary: the sections diff does not compare (nodes, streams, release actions) are checked to be JSON
  // and not read.
  bool summary = false;
  std::string prefix;  // "subgraphs[0]." inside a body
  const char* section = "version";
  int64_t index = -1, step = -1;  // section[index] (.steps[step])
  void at(const std::string& p, const char* s, int64_t i = -1, int64_t k = -1) {
    if (prefix != p) prefix = p;
    section = s;
    index = i;
    step = k;
  }
  std::string text() const {
    std::string out = prefix + section;
    if (!*section && !out.empty() && out.back() == '.') out.pop_back();  // a body as a whole
    if (index >= 0) out += "[" + std::to_string(index) + "]";
    if (step >= 0) out += ".steps[" + std::to_string(step) + "]";
    return out;
  }
};

std::string excerpt(od::value& v, size_t max_chars = 40) {
  std::string_view raw = v.raw_json_token();
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
    raw.remove_suffix(1);
  return text_excerpt(raw, max_chars);
}

[[noreturn]] void wrong(od::value& v, std::string_view key, const std::string& expected) {
  throw FieldError{"\"" + std::string(key) + "\" is " + excerpt(v) + ", " + expected};
}

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

int64_t integer(od::value& v, std::string_view key, int64_t lo, int64_t hi) {
  int64_t i = 0;
  uint64_t u = 0;
  auto range = [&] { return "outside " + std::to_string(lo) + ".." + std::to_string(hi); };
  if (v.get_int64().get(i) != simdjson::SUCCESS) {
    if (v.get_uint64().get(u) == simdjson::SUCCESS) wrong(v, key, range());
    wrong(v, key, "not an integer");
  }
  if (i < lo || i > hi) wrong(v, key, range());
  return i;
}
int int_value(od::value& v, std::string_view key, int lo = -1) {
  return static_cast<int>(integer(v, key, lo, kIntMax));
}
uint64_t u64_value(od::value& v, std::string_view key) {
  uint64_t u = 0;
  if (v.get_uint64().get(u) != simdjson::SUCCESS) wrong(v, key, "not a non-negative integer");
  return u;
}
// The string's text in the parser's buffer: valid until the parser reads the next string.
std::string_view string_text(od::value& v, std::string_view key) {
  std::string_view text;
  if (v.get_string().get(text) != simdjson::SUCCESS) wrong(v, key, "not a string");
  return text;
}
std::string string_value(od::value& v, std::string_view key) {
  return std::string(string_text(v, key));
}
bool bool_value(od::value& v, std::string_view key) {
  bool b = false;
  if (v.get_bool().get(b) != simdjson::SUCCESS) wrong(v, key, "not true or false");
  return b;
}
bool is_null(od::value& v) {
  return take(v.is_null());
}

// Calls each(element) for the elements of a list.
template <typename Each>
void each_of(od::array& list, Each&& each) {
  for (auto r : list) {
    od::value e = take(std::move(r));
    each(e);
  }
}
template <typename Each>
void each_element(od::value& v, std::string_view key, Each&& each) {
  od::array list;
  if (v.get_array().get(list) != simdjson::SUCCESS) wrong(v, key, "not a list");
  each_of(list, each);
}
std::vector<int> int_list(od::value& v, std::string_view key) {
  std::vector<int> out;
  each_element(v, key, [&](od::value& e) { out.push_back(int_value(e, key)); });
  return out;
}

// On-Demand checks the structure it walks; that the document's top value closed and nothing follows it is checked
// once it has been walked.
void check_whole(od::document& doc) {
  const char* rest = nullptr;
  if (doc.current_depth() != 0 || doc.current_location().get(rest) != simdjson::OUT_OF_BOUNDS)
    throw Malformed{simdjson::TAPE_ERROR};
}

// The keys of one kind of object, in the order memplan writes them (byte order). A lookup starts where the last
// one matched, so a plan memplan wrote costs one comparison per key; a key the table lacks is skipped.
template <size_t N>
struct Keys {
  std::array<std::string_view, N> names;
  uint32_t required;  // bit i: names[i] must be present

  // `key` as it stands in the text: a key written with escapes matches none (memplan writes none).
  int find(od::raw_json_string key, size_t& cursor) const {
    for (size_t n = 0; n < N; ++n, cursor = cursor + 1 == N ? 0 : cursor + 1)
      if (names[cursor] == key) return static_cast<int>(cursor);
    return -1;
  }
  void check_required(uint32_t seen) const {
    for (size_t i = 0; i < N; ++i)
      if ((required >> i & 1) && !(seen >> i & 1)) throw FieldError{"\"" + std::string(names[i]) + "\" is missing"};
  }
};

// A value memplan does not read (a value's shape, the totals) is still checked to be JSON, as On-Demand would skip
// it unread: a broken token anywhere in a plan refuses it, as a whole-document parse does (nlohmann then says where).
void check_skipped(od::value& v, size_t depth = 1) {
  if (depth > kMaxJsonDepth) throw FieldError{"nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS) throw Malformed{simdjson::TAPE_ERROR};
  switch (type) {
    case od::json_type::array: {
      od::array list = take(v.get_array());
      for (auto r : list) {
        od::value e = take(std::move(r));
        check_skipped(e, depth + 1);
      }
      return;
    }
    case od::json_type::object: {
      od::object object = take(v.get_object());
      for (auto r : object) {
        od::field field = take(std::move(r));
        take(field.unescaped_key());
        od::value x = field.value();
        check_skipped(x, depth + 1);
      }
      return;
    }
    case od::json_type::number: {
      double d = 0;
      if (v.get_double().get(d) != simdjson::SUCCESS) throw Malformed{simdjson::NUMBER_ERROR};
      return;
    }
    case od::json_type::string: {
      std::string_view text;
      if (v.get_string().get(text) != simdjson::SUCCESS) throw Malformed{simdjson::STRING_ERROR};
      return;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (v.get_bool().get(b) != simdjson::SUCCESS) throw Malformed{simdjson::T_ATOM_ERROR};
      return;
    }
    case od::json_type::null:
      if (!take(v.is_null())) throw Malformed{simdjson::N_ATOM_ERROR};
      return;
  }
}

// Calls read(index in keys, value) for each field of an object that `keys` names, then checks the required ones.
template <size_t N, typename Read>
void read_object(od::value& v, const Keys<N>& keys, Read&& read) {
  od::object object;
  if (v.get_object().get(object) != simdjson::SUCCESS) throw FieldError{"expected an object"};
  uint32_t seen = 0;
  size_t cursor = 0;
  for (auto r : object) {
    od::field field = take(std::move(r));
    const int k = keys.find(field.key(), cursor);
    if (k < 0) {
      od::value skipped = field.value();
      check_skipped(skipped);
      continue;
    }
    seen |= uint32_t{1} << k;
    od::value value = field.value();
    read(k, value);
  }
  keys.check_required(seen);
}

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (s == n) return true;
  return false;
}

StepDoc read_step(od::value& v) {
  static constexpr Keys<6> keys{{"barrier", "host_wait", "kind", "node", "notification", "trigger"}, 0b1100};
  StepDoc step;
  read_object(v, keys, [&](int k, od::value& x) {
    switch (k) {
      case 0:
        step.barrier = int_value(x, "barrier");
        break;
      case 1:
        step.host_wait = bool_value(x, "host_wait");
        break;
      case 2:
        step.kind = string_text(x, "kind");
        if (!one_of(step.kind, {"LaunchKernel", "Barrier", "TriggerDownstream", "WaitOnEP", "ActivateNotification"}))
          throw FieldError{"\"kind\" is '" + terminal_text(step.kind.str()) +
                           "', not LaunchKernel, Barrier, TriggerDownstream, WaitOnEP or ActivateNotification"};
        break;
      case 3:
        step.node = int_value(x, "node");
        break;
      case 4:
        step.notification = int_value(x, "notification");
        break;
      case 5:
        step.trigger = int_value(x, "trigger");
        break;
    }
  });
  return step;
}

WorkspaceDoc read_workspace(od::value& v) {
  static constexpr Keys<3> keys{{"arena", "bytes", "offset"}, 0b111};
  WorkspaceDoc w;
  read_object(v, keys, [&](int k, od::value& x) {
    switch (k) {
      case 0:
        w.arena = int_value(x, "arena", 0);
        break;
      case 1:
        w.bytes = u64_value(x, "bytes");
        break;
      case 2:
        w.offset = u64_value(x, "offset");
        break;
    }
  });
  return w;
}

void read_node(od::value& v, NodeDoc& nd) {
  static constexpr Keys<9> keys{
      {"implicit_inputs", "index", "inputs", "name", "op_type", "outputs", "releases", "stream", "workspace"},
      0b011111111};
  read_object(v, keys, [&](int k, od::value& x) {
    switch (k) {
      case 0:
        nd.implicit_inputs = int_list(x, "implicit_inputs");
        break;
      case 1:
        nd.index = int_value(x, "index");
        break;
      case 2:
        nd.inputs = int_list(x, "inputs");
        break;
      case 3:
        nd.name = string_value(x, "name");
        break;
      case 4:
        nd.op_type = string_text(x, "op_type");
        break;
      case 5:
        nd.outputs = int_list(x, "outputs");
        break;
      case 6:
        nd.releases = int_list(x, "releases");
        break;
      case 7:
        nd.stream = int_value(x, "stream");
        break;
      case 8:
        each_element(x, "workspace", [&](od::value& w) { nd.workspace.push_back(read_workspace(w)); });
        break;
    }
  });
}

// `summary`: the uses (consumers) are checked to be JSON and not kept (read_plan_summary).
void read_value(od::value& v, ValueDoc& vd, bool summary) {
  static constexpr Keys<22> keys{{"alias",       "arena",        "bytes",
                                  "consumers",   "dtype",        "first_use",
                                  "graph_input", "graph_output", "implicit_consumers",
                                  "index",       "initializer",  "inplace",
                                  "inplace_of",  "kind",         "last_use",
                                  "location",    "name",         "offset",
                                  "outer_scope", "producer",     "reused_buffer",
                                  "staging_of"},
                                 0b0110011110001000111100};
  bool has_offset = false;
  read_object(v, keys, [&](int k, od::value& x) {
    switch (k) {
      case 0:
        vd.alias = bool_value(x, "alias");
        break;
      case 1:
        if (!is_null(x)) vd.arena = int_value(x, "arena");
        break;
      case 2:
        if (!is_null(x)) vd.bytes = u64_value(x, "bytes");
        break;
      case 3:
        if (summary)
          check_skipped(x);
        else
          vd.consumers = int_list(x, "consumers");
        break;
      case 4:
        vd.dtype = string_text(x, "dtype");
        break;
      case 5:
        vd.first_use = int_value(x, "first_use");
        break;
      case 6:
        vd.graph_input = bool_value(x, "graph_input");
        break;
      case 7:
        vd.graph_output = bool_value(x, "graph_output");
        break;
      case 8:
        if (summary)
          check_skipped(x);
        else
          vd.implicit_consumers = int_list(x, "implicit_consumers");
        break;
      case 9:
        vd.index = int_value(x, "index");
        break;
      case 10:
        vd.initializer = bool_value(x, "initializer");
        break;
      case 11:
        vd.inplace = bool_value(x, "inplace");
        break;
      case 12:
        vd.inplace_of = int_value(x, "inplace_of");
        break;
      case 13:
        vd.kind = string_text(x, "kind");
        if (!one_of(vd.kind, {"PreExisting", "AllocateStatically", "Allocate", "AllocateOutput", "Reuse", "Share",
                              "AllocatedExternally", "NotSet"}))
          throw FieldError{"\"kind\" is '" + terminal_text(vd.kind.str()) +
                           "', not an allocation kind (Allocate, Reuse, ...)"};
        break;
      case 14:
        vd.last_use = int_value(x, "last_use");
        break;
      case 15:
        vd.location = string_text(x, "location");
        break;
      case 16:
        vd.name = string_value(x, "name");
        break;
      case 17:
        if (!is_null(x)) {
          vd.offset = u64_value(x, "offset");
          has_offset = true;
        }
        break;
      case 18:
        vd.outer_scope = bool_value(x, "outer_scope");
        break;
      case 19:
        vd.producer = int_value(x, "producer");
        break;
      case 20:
        vd.reused_buffer = int_value(x, "reused_buffer");
        break;
      case 21:
        vd.staging_of = int_value(x, "staging_of");
        break;
    }
  });
  if (vd.arena != -1 && !has_offset) throw FieldError{"\"offset\" is missing (the value is in an arena)"};
}

ArenaDoc read_arena(od::value& v) {
  static constexpr Keys<9> keys{
      {"algorithm", "alignment", "bytes", "location", "lower_bound", "multi_stream", "name", "optimal", "purpose"},
      0b111011111};
  ArenaDoc ad;
  read_object(v, keys, [&](int k, od::value& x) {
    switch (k) {
      case 0:
        ad.algorithm = string_value(x, "algorithm");
        break;
      case 1:
        ad.alignment = u64_value(x, "alignment");
        // (a power of two, at most 1 GiB: what --align accepts; 0 would divide by zero in every checker)
        if (ad.alignment == 0 || (ad.alignment & (ad.alignment - 1)) != 0 || ad.alignment > (uint64_t{1} << 30))
          throw FieldError{"\"alignment\" is " + std::to_string(ad.alignment) + ", not a power of two up to 1 GiB"};
        break;
      case 2:
        ad.bytes = u64_value(x, "bytes");
        break;
      case 3:
        ad.location = string_value(x, "location");
        break;
      case 4:
        ad.lower_bound = u64_value(x, "lower_bound");
        break;
      case 5:
        ad.multi_stream = bool_value(x, "multi_stream");
        break;
      case 6:
        ad.name = string_value(x, "name");
        break;
      case 7:
        ad.optimal = bool_value(x, "optimal");
        break;
      case 8:
        ad.purpose = string_value(x, "purpose");
        if (!one_of(ad.purpose, {"activations", "outputs", "weights", "bodies"}))
          throw FieldError{"\"purpose\" is '" + terminal_text(ad.purpose) +
                           "', not activations, outputs, weights or bodies"};
        break;
    }
  });
  return ad;
}

// The sections every graph has, the top-level one and each body.
enum GraphSection : uint32_t {
  kArenas = 1,
  kExecutionOrder = 2,
  kNodes = 4,
  kReleaseActions = 8,
  kStreams = 16,
  kValues = 32,
};

void read_body(od::value& v, PlanDoc& parent, Where& where, const std::string& prefix, size_t list_index);

// Reads `key` if it is one of a graph's sections (streams, nodes, values, release_actions, arenas,
// execution_order, subgraphs) into d; returns the section's bit (kStreams, ...), or 0 for another key.
uint32_t read_graph_section(std::string_view key, od::value& x, PlanDoc& d, Where& where, const std::string& prefix) {
  if (key == "arenas") {
    where.at(prefix, "arenas");
    each_element(x, "arenas", [&](od::value& a) {
      where.at(prefix, "arenas", static_cast<int64_t>(d.arenas.size()));
      d.arenas.push_back(read_arena(a));
    });
    return kArenas;
  }
  if (key == "execution_order") {
    where.at(prefix, "execution_order");
    d.execution_order = int_list(x, "execution_order");
    return kExecutionOrder;
  }
  if (where.summary) {
    static constexpr std::pair<const char*, uint32_t> kNotSummarised[] = {
        {"nodes", kNodes}, {"release_actions", kReleaseActions}, {"streams", kStreams}};
    for (const auto& [name, bit] : kNotSummarised)
      if (key == name) {
        where.at(prefix, name);
        check_skipped(x);
        return bit;
      }
  }
  if (key == "nodes") {
    where.at(prefix, "nodes");
    // The execution order (read before, in byte order) lists every node once; values are about as many. Reserving
    // saves moving a million entries as the lists grow; memory reserved but never touched costs nothing.
    d.nodes.reserve(d.execution_order.size());
    each_element(x, "nodes", [&](od::value& n) {
      where.at(prefix, "nodes", static_cast<int64_t>(d.nodes.size()));
      read_node(n, d.nodes.emplace_back());
    });
    return kNodes;
  }
  if (key == "release_actions") {
    static constexpr Keys<2> keys{{"ref_count", "value"}, 0b11};
    where.at(prefix, "release_actions");
    each_element(x, "release_actions", [&](od::value& r) {
      where.at(prefix, "release_actions", static_cast<int64_t>(d.releases.size()));
      ReleaseDoc rd;
      read_object(r, keys, [&](int k, od::value& y) {
        if (k == 0) rd.ref_count = int_value(y, "ref_count", 0);
        if (k == 1) rd.value = int_value(y, "value");
      });
      d.releases.push_back(rd);
    });
    return kReleaseActions;
  }
  if (key == "streams") {
    static constexpr Keys<3> keys{{"device", "purpose", "steps"}, 0b101};
    where.at(prefix, "streams");
    each_element(x, "streams", [&](od::value& s) {
      const auto index = static_cast<int64_t>(d.streams.size());
      where.at(prefix, "streams", index);
      StreamDoc& sd = d.streams.emplace_back();
      read_object(s, keys, [&](int k, od::value& y) {
        if (k == 0) sd.device = string_value(y, "device");
        if (k == 1) {
          sd.purpose = string_value(y, "purpose");
          if (sd.purpose != "copy-in" && sd.purpose != "copy-out")
            throw FieldError{"\"purpose\" is '" + terminal_text(sd.purpose) + "', not copy-in or copy-out"};
        }
        if (k == 2) {
          od::array steps;
          if (y.get_array().get(steps) != simdjson::SUCCESS) wrong(y, "steps", "not a list");
          // Counted first (a walk over the index, no parsing): a stream of a million steps grown by doubling
          // touched twice its memory, fresh, and moved it on each growth.
          sd.steps.reserve(take(steps.count_elements()));
          each_of(steps, [&](od::value& st) {
            where.at(prefix, "streams", index, static_cast<int64_t>(sd.steps.size()));
            sd.steps.push_back(read_step(st));
          });
        }
        where.at(prefix, "streams", index);
      });
    });
    return kStreams;
  }
  if (key == "values") {
    where.at(prefix, "values");
    d.values.reserve(2 * std::max(d.execution_order.size(), d.nodes.size()));
    each_element(x, "values", [&](od::value& v) {
      where.at(prefix, "values", static_cast<int64_t>(d.values.size()));
      read_value(v, d.values.emplace_back(), where.summary);
    });
    return kValues;
  }
  if (key == "subgraphs") {
    where.at(prefix, "subgraphs");
    int64_t i = 0;
    each_element(x, "subgraphs", [&](od::value& sub) {
      where.at(prefix, "subgraphs", i);
      read_body(sub, d, where, where.text() + ".", static_cast<size_t>(i));
      where.at(prefix, "subgraphs", ++i);
    });
    return 0;
  }
  check_skipped(x);  // (a key of the plan memplan does not read: totals, devices, notes)
  return 0;
}

void check_sections(uint32_t seen, Where& where, const std::string& prefix) {
  static constexpr std::array<const char*, 6> names = {"arenas",          "execution_order", "nodes",
                                                       "release_actions", "streams",         "values"};
  for (size_t i = 0; i < names.size(); ++i)
    if (!(seen >> i & 1)) {
      where.at(prefix, names[i]);
      throw FieldError{"\"" + std::string(names[i]) + "\" is missing"};
    }
}

// A body: a plan of the same form with its owner node, attribute and graph name.
void read_body(od::value& v, PlanDoc& parent, Where& where, const std::string& prefix, size_t list_index) {
  od::object object;
  if (v.get_object().get(object) != simdjson::SUCCESS) {  // (as before: bodies that are not objects are skipped)
    check_skipped(v);
    return;
  }
  // Plans written before bodies had layouts list kinds only; they are read without their bodies.
  od::value streams;
  if (object.find_field_unordered("streams").get(streams) != simdjson::SUCCESS) {
    take(object.reset());
    for (auto r : object) {
      od::field field = take(std::move(r));
      take(field.unescaped_key());
      od::value x = field.value();
      check_skipped(x);
    }
    return;
  }
  take(object.reset());
  SubgraphDoc sd;
  sd.list_index = list_index;
  bool has_owner = false, has_attribute = false, has_graph = false;
  uint32_t seen = 0;
  for (auto r : object) {
    od::field field = take(std::move(r));
    const std::string_view key = take(field.unescaped_key());
    od::value x = field.value();
    if (key == "owner") {
      sd.owner = int_value(x, "owner");
      has_owner = true;
    } else if (key == "attribute") {
      sd.attribute = string_value(x, "attribute");
      has_attribute = true;
    } else if (key == "graph") {
      sd.plan.graph = string_value(x, "graph");
      has_graph = true;
    } else if (key == "complete") {
      sd.plan.complete = bool_value(x, "complete");
    } else {
      seen |= read_graph_section(key, x, sd.plan, where, prefix);
    }
  }
  where.at(prefix, "");
  if (!has_owner) throw FieldError{"\"owner\" is missing"};
  if (!has_attribute) throw FieldError{"\"attribute\" is missing"};
  if (!has_graph) throw FieldError{"\"graph\" is missing"};
  check_sections(seen, where, prefix);
  sd.plan.source =
      parent.source + " (body '" + terminal_text(sd.attribute) + "' of node " + std::to_string(sd.owner) + ")";
  parent.subgraphs.push_back(std::move(sd));
}

void set_version(PlanDoc& d, int version) {
  d.version = version;
  for (SubgraphDoc& sub : d.subgraphs) set_version(sub.plan, version);
}

std::vector<DeviceTotal> read_ort_totals(od::value& x, std::string& method) {
  static constexpr Keys<2> keys{{"device_totals", "method"}, 0b11};
  static constexpr Keys<6> total_keys{{"activations", "complete", "device", "inputs", "outputs", "weights"}, 0b111111};
  std::vector<DeviceTotal> out;
  read_object(x, keys, [&](int k, od::value& y) {
    if (k == 1) method = string_value(y, "method");
    if (k == 0)
      each_element(y, "device_totals", [&](od::value& t) {
        DeviceTotal& dt = out.emplace_back();
        read_object(t, total_keys, [&](int j, od::value& z) {
          switch (j) {
            case 0:
              dt.activations = u64_value(z, "activations");
              break;
            case 1:
              dt.unsized = bool_value(z, "complete") ? 0 : 1;
              break;
            case 2:
              dt.device = string_value(z, "device");
              break;
            case 3:
              dt.inputs = u64_value(z, "inputs");
              break;
            case 4:
              dt.outputs = u64_value(z, "outputs");
              break;
            case 5:
              dt.weights = u64_value(z, "weights");
              break;
          }
        });
      });
  });
  return out;
}

OffloadDoc read_offload(od::value& v) {
  static constexpr Keys<10> keys{{"before", "budget", "bytes_moved", "bytes_per_us", "compute_us", "copy_in_stream",
                                  "copy_out_stream", "device", "estimated_us", "moved"},
                                 0b1011100010};
  OffloadDoc o;
  read_object(v, keys, [&](int k, od::value& x) {
    switch (k) {
      case 0:
        o.before = u64_value(x, "before");
        break;
      case 1:
        o.budget = u64_value(x, "budget");
        break;
      case 2:
        o.bytes_moved = u64_value(x, "bytes_moved");
        break;
      case 5:
        o.copy_in_stream = int_value(x, "copy_in_stream");
        break;
      case 6:
        o.copy_out_stream = int_value(x, "copy_out_stream");
        break;
      case 7:
        o.device = string_value(x, "device");
        break;
      case 9:
        each_element(x, "moved", [&](od::value& m) {
          static constexpr Keys<5> moved_keys{{"copies", "home", "source", "staging", "weight"}, 0b11111};
          OffloadDoc::Moved& md = o.moved.emplace_back();
          read_object(m, moved_keys, [&](int j, od::value& y) {
            if (j == 0) md.copies = int_list(y, "copies");
            if (j == 1) md.home = int_value(y, "home");
            if (j == 2) md.source = int_value(y, "source");
            if (j == 3) md.staging = int_list(y, "staging");
            if (j == 4) md.weight = bool_value(y, "weight");
          });
        });
        break;
      default:
        check_skipped(x);  // the estimate's figures: reported, not checked
    }
  });
  return o;
}

// The whole document, in one pass; the format and version are checked once it has been read (they come late in
// byte order), and again from the start when a field is wrong, so that a file of another kind or version says so
// instead of naming a field.
// `part`: which part of the text the document is (a plan cut as SplitPlan says ends inside a list, which must be its
// last key; its version is read from the tail, its sections are checked once every part has been read).
// `base`: where the text begins (each top-level key's offset from it goes to d.sections).
struct DocPart {
  bool whole = true;
  bool first = true;         // it begins the text (the format is in it)
  std::string_view ends_in;  // a cut part: the list it ends inside, "nodes" or "values"
};
void read_document(od::document& doc, PlanDoc& d, Where& where, const char* base, const DocPart& part, uint32_t& seen) {
  od::object top;
  if (doc.get_object().get(top) != simdjson::SUCCESS) throw FieldError{"not a JSON object"};
  bool is_plan = false, has_version = false, ends_right = false;
  for (auto r : top) {
    od::field field = take(std::move(r));
    const char* quote = field.key().raw() - 1;
    const std::string_view key = take(field.unescaped_key());
    d.sections.push_back({std::string(key), static_cast<size_t>(quote - base), {}});
    od::value x = field.value();
    ends_right = key == part.ends_in;
    if (key == "format") {
      std::string_view format;
      is_plan = x.get_string().get(format) == simdjson::SUCCESS && format == "memplan.plan";
    } else if (key == "version") {
      where.at("", "version");
      d.version = int_value(x, "version");
      has_version = true;
    } else if (key == "model") {
      static constexpr Keys<3> keys{{"graph", "path", "sha256"}, 0b111};
      where.at("", "model");
      read_object(x, keys, [&](int k, od::value& y) {
        if (k == 0) d.graph = string_value(y, "graph");
        if (k == 1) d.model_path = string_value(y, "path");
        if (k == 2) d.model_sha256 = string_value(y, "sha256");
      });
    } else if (key == "options") {
      where.at("", "options");
      od::object options;
      if (x.get_object().get(options) != simdjson::SUCCESS) throw FieldError{"expected an object of strings"};
      for (auto o : options) {
        od::field option = take(std::move(o));
        const std::string name(take(option.unescaped_key()));
        std::string_view text;
        if (option.value().get_string().get(text) != simdjson::SUCCESS)
          throw FieldError{"\"" + terminal_text(name) + "\" is not a string"};
        d.options[name] = std::string(text);
      }
    } else if (key == "complete") {
      where.at("", "complete");
      d.complete = bool_value(x, "complete");
    } else if (key == "ort_rules_estimate") {
      where.at("", "ort_rules_estimate");
      d.ort_rules = read_ort_totals(x, d.ort_rules_method);
    } else if (key == "offload") {
      where.at("", "offload");
      d.offload = read_offload(x);
    } else {
      seen |= read_graph_section(key, x, d, where, "");
    }
  }
  check_whole(doc);
  if (part.first && !is_plan) throw FieldError{"not a plan"};
  where.at("", "version");
  if (part.whole) {
    if (!has_version) throw FieldError{"\"version\" is missing"};
    check_sections(seen, where, "");
  } else if (!ends_right) {
    throw Malformed{simdjson::TAPE_ERROR};  // (the cut was not in the list it was looked for in)
  }
}

// What a file whose fields did not read says it is, from its text (the document cannot be walked again after an
// error): nullopt when it does not say "memplan.plan" (sniff_file_kind), else the number after its last "version"
// key (memplan writes the top-level version last), or -1.
std::optional<int> plan_version(std::string_view text) {
  if (sniff_file_kind(text) != FileKind::kPlan) return std::nullopt;
  size_t at = text.rfind("\"version\"");
  if (at == std::string_view::npos) return -1;
  at += 9;
  while (at < text.size() && (text[at] == ' ' || text[at] == ':' || text[at] == '\n' || text[at] == '\t')) ++at;
  int64_t version = 0;
  size_t digits = 0;
  for (; at < text.size() && text[at] >= '0' && text[at] <= '9' && digits < 10; ++at, ++digits)
    version = version * 10 + (text[at] - '0');
  return digits ? static_cast<int>(version) : -1;
}

void check_version(int version, const std::string& source) {
  if (version != 1 && version != 2)
    fail_input(source, "plan format version " + std::to_string(version) +
                           " is not supported (this memplan reads versions 1 and 2)");
}

// The checks after reading: the version (every body has its plan's), then the structure.
void finish_plan(PlanDoc& d, bool summary) {
  check_version(d.version, d.source);
  set_version(d, d.version);
  if (summary)
    check_values_structure(d);
  else
    check_plan_structure(d);
}

// A plan memplan wrote (one-space indent, keys in byte order) has two long lists, its nodes and, at its end, its
// values (together about 90% of the text):
//   {\n "arenas": ..., "nodes": [\n  {\n   "domain": ...},\n  {\n   "domain": ...}\n ],\n "options": ...,
//   "values": [\n  {\n   "alias": ...},\n  {\n   "alias": ...}\n ],\n "version": N\n}
// Such a text is read as a chain of whole JSON documents, made by changing a byte or two at each cut, so that
// simdjson's index of what it parses (4 bytes per token, fresh memory) is as large as one piece, not as the text:
// - the head, from the start to the ',' after the first node, made ']' (and the '\n' after it '}');
// - the rest of the nodes in pieces of about `piece_bytes`: the space before a piece's first node made '[', the ','
//   after its last ']' (the last piece ends at the list's own ']');
// - the middle, from the ',' after the nodes' ']', made '{', to the ',' after the first value, cut as the head is;
// - the rest of the values in pieces, cut as the nodes are.
// Two threads read them. The calling thread reads the head, the node pieces and the middle, while the second finds
// the values' cuts (the text between the nodes and the values is searched) and reads value pieces from the first
// one on; then the first reads value pieces from the last one back, until they meet. Each reads with one parser.
// No byte is copied, and nothing else is searched but a few bytes around each cut, the tail, and the text before the
// nodes. simdjson checks each document whole and each must end in the list it was cut in, so together they are the
// original text exactly; any other layout, or any error, is read (and worded) in one pass over the original. A text
// whose nodes are not found as memplan writes them is cut in its values only (its head ends in the first value).
using Piece = std::pair<size_t, size_t>;  // [begin, end]: the space made '[', the ',' made ']' (or the list's ']')
using ByteEdits = std::vector<std::pair<size_t, char>>;  // where, and the byte it becomes (swapped: it was)
struct SplitPlan {
  size_t list_end = 0;    // the values' ']'
  size_t version_at = 0;  // the quote of the top-level "version" key (read from the tail)
  int version = 0;
  size_t head_cut = 0;             // the ',' after the first node (when the nodes are cut)
  std::vector<Piece> node_pieces;  // none: the nodes are not cut
  size_t middle = 0;               // the ',' after the nodes' ']' (when they are cut)
};
// The values' cuts: after the first value (the end of the middle, or of the head), then the pieces.
struct ValueCuts {
  size_t cut = 0;
  std::vector<Piece> pieces;
  // Room for every value in the pieces (a value takes more than 256 bytes of text): what each reading thread
  // reserves, so that its list never grows by moving the values read so far into fresh memory (reserved memory that
  // is never touched costs nothing).
  size_t values_room() const { return (pieces.back().second - pieces.front().first) / 256; }
};

constexpr size_t npos = std::string_view::npos;
// The fewest bytes a node's text can take: its eight required keys with empty values, no space ({"implicit_inputs":
// [],"index":0,"inputs":[],"name":"","op_type":"","outputs":[],"releases":[],"stream":0}, 105 bytes).
constexpr size_t kLeastNodeText = 100;
// Between two top-level nodes, and two values: a cut is at the ',' (+4); the next piece begins at the space (+7).
constexpr std::string_view kNodeBoundary = "\n  },\n  {\n   \"domain\": ";
constexpr std::string_view kValueBoundary = "\n  },\n  {\n   \"alias\": ";
// How far past a piece's length the next node boundary is looked for before the list's end is.
constexpr size_t kBoundaryWindow = size_t{1} << 16;

// The first `needle` wholly inside text[from, to) (npos if none). memmem skips ahead on a long needle, where
// string_view::find stops at each of its first byte, a '\n' here.
size_t find_between(std::string_view text, std::string_view needle, size_t from, size_t to) {
  to = std::min(to, text.size());
  if (from >= to || to - from < needle.size()) return npos;
  const void* at = ::memmem(text.data() + from, to - from, needle.data(), needle.size());
  return at ? static_cast<size_t>(static_cast<const char*>(at) - text.data()) : npos;
}

// The pieces of the nodes after the boundary `at` (the first node's end); returns where the list's ']' is, or npos
// (no end where memplan puts one). A piece ends at the first boundary after `piece_bytes`, looked for near there;
// the list's end, the first top-level list end after a piece's beginning, only when no boundary is near.
size_t cut_nodes(std::string_view text, size_t at, size_t piece_bytes, std::vector<Piece>& pieces) {
  static constexpr std::string_view list_end = "\n  }\n ],\n \"";
  for (;;) {
    const size_t begin = at + 7, from = begin + piece_bytes;
    at = find_between(text, kNodeBoundary, from, from + kBoundaryWindow);
    if (at == npos) {
      const size_t end = find_between(text, list_end, begin, text.size());
      if (end == npos) return npos;
      at = find_between(text, kNodeBoundary, from, end);  // (a node longer than the window)
      if (at == npos) {
        pieces.emplace_back(begin, end + 6);
        return end + 6;
      }
    }
    pieces.emplace_back(begin, at + 4);
  }
}

// The tail and the nodes' cuts (nullopt: not memplan's layout, or too short to be worth cutting).
std::optional<SplitPlan> find_split(std::string_view text, uint64_t split_from_bytes, size_t piece_bytes) {
  if (text.size() < split_from_bytes) return std::nullopt;
  piece_bytes = std::max<size_t>(piece_bytes, 1);
  SplitPlan s;
  // The tail, read backwards: whitespace, '}', "\n", the version's digits, ",\n \"version\": ", the list's ']'.
  auto space = [&](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  size_t end = text.size();
  while (end > 0 && space(text[end - 1])) --end;
  if (end == 0 || text[--end] != '}') return std::nullopt;
  while (end > 0 && space(text[end - 1])) --end;
  size_t digits = end;
  while (digits > 0 && text[digits - 1] >= '0' && text[digits - 1] <= '9') --digits;
  if (digits == end || end - digits > 9) return std::nullopt;
  for (size_t i = digits; i < end; ++i) s.version = s.version * 10 + (text[i] - '0');
  static constexpr std::string_view version_key = "\n ],\n \"version\": ";
  if (digits < version_key.size() || text.substr(digits - version_key.size(), version_key.size()) != version_key)
    return std::nullopt;
  s.list_end = digits - version_key.size() + 2;
  s.version_at = s.list_end + 4;
  // The nodes, cut after the first.
  static constexpr std::string_view nodes_key = "\n \"nodes\": [\n  {\n   \"domain\": ";
  if (const size_t nodes = find_between(text, nodes_key, 0, s.list_end); nodes != npos) {
    const size_t first = find_between(text, kNodeBoundary, nodes, nodes + kBoundaryWindow);
    const size_t nodes_end = first == npos ? npos : cut_nodes(text, first, piece_bytes, s.node_pieces);
    if (nodes_end == npos || nodes_end >= s.list_end) {
      s.node_pieces.clear();
    } else {
      s.head_cut = first + 4;
      s.middle = nodes_end + 1;
    }
  }
  return s;
}

// The values' cuts, from the first value after the nodes (nullopt: none found).
std::optional<ValueCuts> cut_values(std::string_view text, const SplitPlan& s, size_t piece_bytes) {
  piece_bytes = std::max<size_t>(piece_bytes, 1);
  size_t at = find_between(text, kValueBoundary, s.node_pieces.empty() ? 0 : s.middle, s.list_end);
  if (at == npos) return std::nullopt;
  ValueCuts v;
  v.cut = at + 4;
  for (;;) {
    const size_t begin = at + 7;
    at = find_between(text, kValueBoundary, begin + piece_bytes, s.list_end);
    v.pieces.emplace_back(begin, at == npos ? s.list_end : at + 4);
    if (at == npos) return v;
  }
}

// The bytes a list's pieces change: each begins with '[', each but the last ends with ']'.
void cut_pieces(const std::vector<Piece>& pieces, ByteEdits& edits) {
  for (size_t i = 0; i < pieces.size(); ++i) {
    edits.emplace_back(pieces[i].first, '[');
    if (i + 1 < pieces.size()) edits.emplace_back(pieces[i].second, ']');
  }
}
ByteEdits node_edits(const SplitPlan& s) {
  ByteEdits edits;
  if (s.node_pieces.empty()) return edits;
  edits = {{s.head_cut, ']'}, {s.head_cut + 1, '}'}, {s.middle, '{'}};
  cut_pieces(s.node_pieces, edits);
  return edits;
}
ByteEdits value_edits(const ValueCuts& v) {
  ByteEdits edits = {{v.cut, ']'}, {v.cut + 1, '}'}};
  cut_pieces(v.pieces, edits);
  return edits;
}
// Makes the edits, or undoes them (each byte is swapped with what it becomes).
void swap_bytes(char* bytes, ByteEdits& edits) {
  for (auto& [at, c] : edits) std::swap(bytes[at], c);
}

od::document iterate_part(od::parser& parser, std::string_view text, size_t readable, size_t begin, size_t end) {
  od::document doc;
  if (const simdjson::error_code code = parser.iterate(text.data() + begin, end + 1 - begin, readable - begin).get(doc))
    throw Malformed{code};
  return doc;
}

TextPiece text_piece(const Piece& piece, size_t first, size_t count) {
  return {first, count, piece.first + 1, piece.second};
}

// Reads one piece of a cut list with `parser`, calling each(element).
template <typename Each>
void read_piece(od::parser& parser, std::string_view text, size_t readable, const Piece& piece, Each&& each) {
  od::document doc = iterate_part(parser, text, readable, piece.first, piece.second);
  od::array array = take(doc.get_array());
  each_of(array, each);
  check_whole(doc);
}

// Reads a plan cut as `s` says, making the cuts in `bytes` (the text's, writable) and undoing them before it
// returns; nullopt on any error (then the caller reads the original in one pass, which words the error).
std::optional<PlanDoc> read_split_plan(char* bytes, std::string_view text, size_t readable, const SplitPlan& s,
                                       size_t piece_bytes, const std::string& source, bool summary) {
  ByteEdits first_edits = node_edits(s), second_edits;
  swap_bytes(bytes, first_edits);
  // What the threads share, under `lock`: the values' cuts once the second thread has found them, and the value
  // pieces neither has taken, [front, back).
  std::mutex lock;
  std::condition_variable cut;
  bool cut_done = false, cut_ok = false;
  ValueCuts v;
  size_t front = 0, back = 0;
  auto take = [&](bool from_front, size_t& i) {
    std::lock_guard<std::mutex> hold(lock);
    if (front == back) return false;
    i = from_front ? front++ : --back;
    return true;
  };
  auto stop = [&](bool cut_failed) {  // (an error: neither thread takes another piece)
    std::lock_guard<std::mutex> hold(lock);
    if (cut_failed) cut_done = true;
    front = back;
    cut.notify_all();
  };

  // The second thread's values, from the values' first piece on, after a place for the first value (the middle's),
  // and where its pieces stand in the text (PlanDoc::sections).
  std::vector<ValueDoc> values;
  std::vector<TextPiece> value_pieces;
  bool second_ok = false;
  std::thread worker([&] {
    try {
      {
        std::optional<ValueCuts> found = cut_values(text, s, piece_bytes);
        std::lock_guard<std::mutex> hold(lock);
        if (found) {
          v = std::move(*found);
          second_edits = value_edits(v);
          swap_bytes(bytes, second_edits);
          back = v.pieces.size();
          cut_ok = true;
        }
        cut_done = true;
        cut.notify_all();
        if (!cut_ok) return;
      }
      od::parser parser;
      values.reserve(v.values_room());
      values.emplace_back();
      for (size_t i = 0; take(true, i);) {
        const size_t first = values.size();
        read_piece(parser, text, readable, v.pieces[i],
                   [&](od::value& x) { read_value(x, values.emplace_back(), summary); });
        value_pieces.push_back(text_piece(v.pieces[i], first, values.size() - first));
      }
      second_ok = true;
    } catch (...) {
      stop(true);
    }
  });

  PlanDoc d;
  d.source = source;
  std::vector<ValueDoc> last_values;                   // the first thread's, the last piece's first
  std::vector<std::pair<size_t, size_t>> last_pieces;  // (first value in last_values, count), as taken
  std::vector<size_t> last_taken;                      // their pieces
  std::vector<TextPiece> node_pieces;
  bool first_ok = false;
  try {
    od::parser parser;
    Where where;
    where.summary = summary;
    uint32_t seen = 0;
    auto wait_for_cut = [&] {
      std::unique_lock<std::mutex> hold(lock);
      cut.wait(hold, [&] { return cut_done; });
      if (!cut_ok) throw Malformed{simdjson::TAPE_ERROR};
    };
    if (!s.node_pieces.empty()) {
      od::document head = iterate_part(parser, text, readable, 0, s.head_cut + 1);
      read_document(head, d, where, text.data(), {false, true, "nodes"}, seen);
      // Room for every node (each takes at least kLeastNodeText bytes): the list never moves the nodes read so far
      // into fresh memory, as growing it by doubling would (at 1M nodes, 176 MB touched twice).
      d.nodes.reserve(d.nodes.size() + (s.node_pieces.back().second - s.node_pieces.front().first) / kLeastNodeText);
      for (const Piece& piece : s.node_pieces) {
        const size_t first = d.nodes.size();
        read_piece(parser, text, readable, piece, [&](od::value& n) {
          if (summary)
            check_skipped(n);
          else
            read_node(n, d.nodes.emplace_back());
        });
        node_pieces.push_back(text_piece(piece, first, d.nodes.size() - first));
      }
      wait_for_cut();
      od::document middle = iterate_part(parser, text, readable, s.middle, v.cut + 1);
      read_document(middle, d, where, text.data(), {false, false, "values"}, seen);
    } else {
      wait_for_cut();
      od::document head = iterate_part(parser, text, readable, 0, v.cut + 1);
      read_document(head, d, where, text.data(), {false, true, "values"}, seen);
    }
    last_values.reserve(v.values_room());  // (unreserved: 90 MB more touched in validate of a 1M-value plan)
    for (size_t i = 0; take(false, i);) {
      const size_t first = last_values.size();
      read_piece(parser, text, readable, v.pieces[i],
                 [&](od::value& x) { read_value(x, last_values.emplace_back(), summary); });
      last_pieces.emplace_back(first, last_values.size() - first);
      last_taken.push_back(i);
    }
    check_sections(seen, where, "");
    first_ok = true;
  } catch (...) {
    stop(false);
  }
  worker.join();
  swap_bytes(bytes, second_edits);
  swap_bytes(bytes, first_edits);
  if (!first_ok || !second_ok) return std::nullopt;
  // The middle's values (memplan's layout: the first alone) in front, the first thread's pieces (taken from the
  // last back) after the second's: each value moves at most once, and only the first thread's into fresh memory.
  if (d.values.size() == 1) {
    values.front() = std::move(d.values.front());
  } else {
    values.erase(values.begin());
    values.insert(values.begin(), std::make_move_iterator(d.values.begin()), std::make_move_iterator(d.values.end()));
    value_pieces.clear();  // (their indices moved; not memplan's layout, which has one value in the middle)
  }
  const bool record_pieces = d.values.size() == 1;
  values.reserve(values.size() + last_values.size());
  for (size_t k = last_pieces.size(); k-- > 0;) {
    const auto [first, count] = last_pieces[k];
    if (record_pieces) value_pieces.push_back(text_piece(v.pieces[last_taken[k]], values.size(), count));
    std::move(last_values.begin() + static_cast<std::ptrdiff_t>(first),
              last_values.begin() + static_cast<std::ptrdiff_t>(first + count), std::back_inserter(values));
  }
  d.values = std::move(values);
  // The pieces go to their lists' sections (for corrupt, which reads whole plans).
  if (!summary)
    for (auto& [key, pieces] : {std::pair{"nodes", &node_pieces}, std::pair{"values", &value_pieces}})
      for (auto section = d.sections.rbegin(); section != d.sections.rend(); ++section)
        if (section->key == key) {
          section->pieces = std::move(*pieces);
          break;
        }
  d.version = s.version;
  d.sections.push_back({"version", s.version_at, {}});
  return d;
}

// The text of a plan with `readable` bytes readable from text.data() (simdjson reads up to SIMDJSON_PADDING bytes
// past the end; when they are not there, the text is copied).
PlanDoc read_plan_text(std::string_view text, size_t readable, const std::string& source, bool summary = false) {
  expect_file_kind(text, source, FileKind::kPlan);
  std::optional<simdjson::padded_string> copy;
  if (readable < text.size() + simdjson::SIMDJSON_PADDING) copy.emplace(text);
  const simdjson::padded_string_view padded =
      copy ? simdjson::padded_string_view(*copy) : simdjson::padded_string_view(text.data(), text.size(), readable);
  od::parser parser;
  od::document doc;
  PlanDoc d;
  d.source = source;
  Where where;
  where.summary = summary;
  auto not_a_plan = [&] {
    fail_input(source, "not a memplan plan (expected \"format\": \"memplan.plan\"); write one with memplan plan");
  };
  try {
    if (const simdjson::error_code code = parser.iterate(padded).get(doc)) throw Malformed{code};
    uint32_t seen = 0;
    read_document(doc, d, where, padded.data(), {}, seen);
  } catch (const Malformed& e) {
    if (e.code == simdjson::MEMALLOC) fail_input(source, "not enough memory to parse the plan");
    // The exact complaint, with its position, from nlohmann (or the nesting check), on this rare path only.
    parse_json_input(std::string(text), source);
    fail_input(source, "malformed plan in \"" + where.text() + "\": " + simdjson::error_message(e.code));
  } catch (const FieldError& e) {
    // A syntax error the walk met as a wrong field is worded as one (nlohmann says where; the nesting check too).
    parse_json_input(std::string(text), source);
    const std::optional<int> version = plan_version(text);
    if (!version) not_a_plan();
    if (*version != -1) check_version(*version, source);
    fail_input(source, "malformed plan in \"" + where.text() + "\": " + e.what);
  } catch (const simdjson::simdjson_error& e) {
    parse_json_input(std::string(text), source);
    fail_input(source, "malformed plan in \"" + where.text() + "\": " + e.what());
  }
  finish_plan(d, summary);
  return d;
}

}  // namespace

std::optional<SplitShape> split_shape(std::string_view text, size_t piece_bytes) {
  const std::optional<SplitPlan> s = find_split(text, 0, piece_bytes);
  const std::optional<ValueCuts> v = s ? cut_values(text, *s, piece_bytes) : std::nullopt;
  if (!v) return std::nullopt;
  return SplitShape{s->node_pieces.size(), v->pieces.size()};
}

PlanDoc read_plan_doc(const std::string& text, const std::string& source) {
  return read_plan_text(text, text.capacity(), source);
}

namespace {

PlanDoc read_input(InputText& file, const std::string& source, uint64_t split_from_bytes, size_t piece_bytes,
                   bool summary) {
  const size_t readable = file.text().size() + kInputPadding;
  if (const std::optional<SplitPlan> split = find_split(file.text(), split_from_bytes, piece_bytes)) {
    // (the text is the file's again afterwards, for a caller that edits it: corrupt)
    std::optional<PlanDoc> d =
        read_split_plan(file.writable(), file.text(), readable, *split, piece_bytes, source, summary);
    if (d) {
      finish_plan(*d, summary);
      return std::move(*d);
    }
  }
  return read_plan_text(file.text(), readable, source, summary);
}

}  // namespace

PlanDoc read_plan_input(InputText& file, const std::string& source, uint64_t split_from_bytes, size_t piece_bytes) {
  return read_input(file, source, split_from_bytes, piece_bytes, /*summary=*/false);
}

PlanDoc read_plan_file(const std::string& path, uint64_t split_from_bytes, size_t piece_bytes) {
  InputText file(path);
  return read_plan_input(file, path, split_from_bytes, piece_bytes);
}

PlanDoc read_plan_summary(const std::string& path, uint64_t split_from_bytes, size_t piece_bytes) {
  InputText file(path);
  return read_input(file, path, split_from_bytes, piece_bytes, /*summary=*/true);
}

}  // namespace memplan::plan_doc
