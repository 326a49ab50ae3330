// A plan as read back from its JSON file: what `validate` and `replay` work on. They never see the
// planner's internals, so they are an independent second opinion. Reads JSON with simdjson; no protobuf.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/device_totals.h"
#include "memplan/file_io.h"
#include "memplan/interned_string.h"
#include "memplan/sync_knowledge.h"

namespace memplan::plan_doc {

struct StepDoc {
  InternedString kind;  // LaunchKernel, Barrier, TriggerDownstream, WaitOnEP, ActivateNotification
  int node = -1;
  int barrier = -1, trigger = -1, notification = -1;
  bool host_wait = false;
};

struct StreamDoc {
  std::string device;   // "cpu", "gpu:0", ...
  std::string purpose;  // "" (compute), or offload's "copy-in" / "copy-out" (version 2)
  bool on_cpu() const { return device == "cpu"; }
  std::vector<StepDoc> steps;
};

// Memory a node holds while it runs: its If/Loop/Scan bodies' arena on one device (planner/subgraphs.h).
struct WorkspaceDoc {
  int arena = -1;
  uint64_t offset = 0, bytes = 0;
};

struct NodeDoc {
  int index = -1;
  std::string name;
  InternedString op_type;
  int stream = -1;
  std::vector<int> inputs, outputs, implicit_inputs, releases;
  std::vector<WorkspaceDoc> workspace;
  // How messages name the node: its name, or its op type when it has none.
  const std::string& label() const { return name.empty() ? op_type.str() : name; }
};

// (Its members are ordered to leave no padding: a large plan holds a million or more.)
struct ValueDoc {
  int index = -1;
  int reused_buffer = -1, inplace_of = -1, producer = -1;
  int first_use = -1, last_use = -1;
  int arena = -1;       // -1: no arena
  int staging_of = -1;  // offload (version 2): this value is a device copy of that one, its home in host memory
  bool graph_input = false, initializer = false, graph_output = false, inplace = false, alias = false;
  bool outer_scope = false;  // in a body: a value of an enclosing graph (PreExisting, owned there)
  std::string name;
  InternedString kind, location, dtype;
  std::optional<uint64_t> bytes;
  uint64_t offset = 0;
  std::vector<int> consumers, implicit_consumers;
};

// What offload planning moved (version 2): see planner/offload_record.h.
struct OffloadDoc {
  std::string device;
  uint64_t budget = 0, before = 0, bytes_moved = 0;
  int copy_in_stream = -1, copy_out_stream = -1;
  struct Moved {
    int home = -1, source = -1;
    std::vector<int> staging, copies;
    bool weight = false;
  };
  std::vector<Moved> moved;
};

struct ArenaDoc {
  std::string name, location, purpose, algorithm;
  uint64_t bytes = 0, lower_bound = 0, alignment = 1;
  bool optimal = false;
  bool multi_stream = false;
};

struct ReleaseDoc {
  int value = -1;
  int ref_count = 0;
};

struct SubgraphDoc;

// Where a top-level key of a plan's text stands (the offset of its opening quote), as the reader met it: what
// edit_text needs to parse only the sections it edits (corrupt.h).
// A list read in pieces (read_plan.cc) also says where each piece stands, so that an edit of one element parses one
// piece: elements [first, first + count), whose text runs from `begin` (the first's first byte) to `end` (the ','
// after the last, or the list's ']').
struct TextPiece {
  size_t first = 0, count = 0;
  size_t begin = 0, end = 0;
};
struct TextSection {
  std::string key;
  size_t at = 0;
  std::vector<TextPiece> pieces;  // (a list read in pieces: the nodes and values of a large plan)
};

struct PlanDoc {
  std::string source;  // the file it came from (for a body: the file and which body)
  int version = 0;
  std::string model_path, model_sha256, graph;
  std::map<std::string, std::string> options;
  std::vector<StreamDoc> streams;
  std::vector<NodeDoc> nodes;
  std::vector<ValueDoc> values;
  std::vector<ReleaseDoc> releases;
  std::vector<ArenaDoc> arenas;
  std::vector<int> execution_order;
  // What ORT's rules would need (pipeline.h's kOrtRulesMethod), when the plan records it.
  std::optional<std::vector<DeviceTotal>> ort_rules;
  std::string ort_rules_method;
  // If/Loop/Scan bodies: each a plan of the same form, run once per execution of its owner.
  std::vector<SubgraphDoc> subgraphs;
  bool complete = true;               // as recorded (bodies: their own unsized values)
  std::optional<OffloadDoc> offload;  // version 2
  std::vector<TextSection> sections;  // the top-level keys in text order (top level only; empty for bodies)
};

struct SubgraphDoc {
  int owner = -1;  // node of the enclosing plan
  std::string attribute;
  size_t list_index = 0;  // its place in the enclosing plan's "subgraphs" list
  PlanDoc plan;
};

// Parses and checks the structure (every index in range). Throws Error(kBadInput) naming the file and
// the field on a malformed plan or a format version it does not know.
PlanDoc read_plan_doc(const std::string& text, const std::string& source);
// The same from a file ("-": stdin), mapped rather than copied when it is a regular file. A plan of at least
// `split_from_bytes` in the layout memplan writes is read by two threads at once, the second reading its part in
// pieces of about `piece_bytes` (read_plan.cc); the result is the same, errors included.
inline constexpr uint64_t kSplitReadBytes = uint64_t{32} << 20;
inline constexpr size_t kPieceBytes = size_t{4} << 20;
PlanDoc read_plan_file(const std::string& path, uint64_t split_from_bytes = kSplitReadBytes,
                       size_t piece_bytes = kPieceBytes);
// The same from a file already open (its text is unchanged afterwards: memplan corrupt edits it).
PlanDoc read_plan_input(InputText& file, const std::string& source, uint64_t split_from_bytes = kSplitReadBytes,
                        size_t piece_bytes = kPieceBytes);
// What `diff` compares of a plan file: the same, without its nodes, streams and release actions, whose text is
// checked to be JSON and not read (a third of a large plan's text, and most of its small objects). The checks after
// reading are those of check_values_structure.
PlanDoc read_plan_summary(const std::string& path, uint64_t split_from_bytes = kSplitReadBytes,
                          size_t piece_bytes = kPieceBytes);
// How read_plan_file cuts this text when it is large enough (memplan's layout; read_plan.cc): how many pieces of
// about `piece_bytes` its nodes and its values are read in after the first of each (nullopt: read in one pass).
struct SplitShape {
  size_t node_pieces = 0, value_pieces = 0;
};
std::optional<SplitShape> split_shape(std::string_view text, size_t piece_bytes = kPieceBytes);

// The most streams a plan may have (memplan plans at most 64 per device); replay runs a thread per stream.
inline constexpr int kMaxPlanStreams = 1024;

// The structural checks read_plan_doc makes after parsing, for plans built in memory: every index in range,
// lifetimes within the execution order, in-place chains without cycles, offsets that do not overflow,
// synchronisation indices bounded by the number of steps, a bounded number of streams. Throws
// Error(kBadInput) naming plan.source and the field.
void check_plan_structure(const PlanDoc& plan);
// The part of those checks that needs no nodes or steps, for a plan read without them (read_plan_summary): each
// value's index is its position, its arena exists, its buffer and in-place links name values; the same in bodies.
void check_values_structure(const PlanDoc& plan);

// Values of known size whose memory belongs to a value of unknown size (in place of it, a view of it, or
// reusing its buffer): their bytes would live nowhere the plan places. One message per such value, naming
// both; empty for a sound plan. validate and replay refuse plans with any.
std::vector<std::string> unsized_dependencies(const PlanDoc& plan);

// The value of `parent` through which a body of `owner` reads its outer value `name`: one of the owner's implicit
// inputs, named `name` or, for a copy made for the owner's device, `name` with the provider appended as ORT names it
// ("x_CUDAExecutionProvider"). -1 when the owner reads no such value.
int outer_value_source(const PlanDoc& parent, const NodeDoc& owner, const std::string& name);

// Each value's in-place chain root (chain_roots over inplace_of): kOnCycle for a value on or leading into a cycle.
std::vector<int32_t> inplace_roots(const PlanDoc& plan);

// Values the plan must allocate (Allocate, AllocateOutput, AllocateStatically) whose size is unknown. A
// plan with any is incomplete: it leaves them out of every arena and total.
std::vector<int> unsized_allocations(const PlanDoc& plan);

// Per device, largest first: arenas by purpose, the caller's graph inputs placed there, unsized values (bodies'
// included).
std::vector<DeviceTotal> device_totals(const PlanDoc& plan);

// The plan's streams as the synchronisation model reads them (memplan/sync_knowledge.h), without step `skip_step` of
// stream `skip_stream` when given (what a dropped sync would leave).
std::vector<sync::Stream> sync_streams(const PlanDoc& plan, int skip_stream = -1, int skip_step = -1);

// What the plan records ORT would need on `device` (its ort_rules_estimate), or nullptr.
const DeviceTotal* ort_total(const PlanDoc& plan, const std::string& device);

}  // namespace memplan::plan_doc
