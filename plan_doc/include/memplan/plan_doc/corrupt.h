// Deliberate corruptions of a valid plan, for testing that `validate` and `replay` catch each kind of
// mistake a planner could make. A corruption is chosen on the plan as read (a PlanDoc) and made as a few edits of
// its JSON: to a tree (the tests) or to the text itself (`memplan corrupt`, which so never builds a tree of a
// gigabyte plan and changes no byte but the edited ones).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/plan_doc/plan_doc.h"

namespace memplan::plan_doc {

enum class Corruption {
  kOffsetOntoLiveNeighbour,  // a value's offset moved onto a value live at the same time
  kDropWaitOnEP,             // a WaitOnEP step removed
  kDropBarrier,              // a Barrier step removed
  kReleaseEarlier,           // a release action moved to the previous node of its stream
  kShrinkArena,              // an arena made one alignment unit smaller
  kMisalignOffset,           // an offset moved off its alignment
  kChangeKind,               // a value's kind changed (Allocate <-> PreExisting, ...)
  kShrinkWorkspace,          // the memory a node holds for its If/Loop/Scan bodies made one alignment unit smaller
  kDropCopyWait,             // offload: a WaitOnEP between a copy and the value it carries removed (a reader no
                             // longer waits for its copy-in, or a copy-out for its source's producer)
  kMoveStaging,              // offload: a staging value's offset moved onto a value live at the same time
};

const std::vector<Corruption>& all_corruptions();
const char* corruption_name(Corruption c);  // "offset", "wait", "barrier", "release", "shrink", "misalign", "kind",
                                            // "workspace", "copy-wait", "staging"
bool parse_corruption(const std::string& name, Corruption& out);

// One edit of a plan's JSON. `path` goes from the top: object keys, and indices into lists (as digits).
struct PlanEdit {
  enum class Op {
    kSet,     // the value at path becomes `value`
    kErase,   // the list element at path is removed
    kAppend,  // `value` is added at the end of the list at path
  };
  Op op = Op::kSet;
  std::vector<std::string> path;
  nlohmann::ordered_json value;  // a number or a string
};

// Whether a path step is an index into a list (digits only) rather than an object key.
bool is_list_index(const std::string& step);

struct ChosenCorruption {
  std::vector<PlanEdit> edits;
  std::string what;  // the change, in words
};

// Chooses one corruption by `seed` among the places it applies to; nullopt when the plan has none (e.g. no
// WaitOnEP in a CPU plan). With `body` >= 0 it goes into that If/Loop/Scan body's plan (bodies numbered depth
// first, as count_bodies counts them), which has the same form as the top-level one.
std::optional<ChosenCorruption> choose_corruption(const PlanDoc& plan, Corruption kind, uint64_t seed, int body = -1);
int count_bodies(const PlanDoc& plan);

// The edits made to a tree, or to the text of a plan (one pass; the bytes outside the edited values unchanged, and
// the layout kept: an appended element is indented like its list). `readable`: the bytes readable from
// text.data(), at least text.size() + 64 (simdjson reads past the end; with fewer the text is copied). `sections`:
// where the text's top-level keys stand (PlanDoc::sections of this text), to parse only the sections edited; without
// them the whole text is parsed. Throws Error(kBadInput) naming `source` when a path is not in the text.
void apply_edits(nlohmann::ordered_json& plan, const std::vector<PlanEdit>& edits);
std::string apply_edits(std::string_view text, size_t readable, const std::vector<PlanEdit>& edits,
                        const std::string& source, const std::vector<TextSection>* sections = nullptr);

// The edited text as pieces, for writing without assembling it: slices of the text and the new bytes (held here).
// `writable`: text.data() made writable (InputText::writable()), or null: a piece of a list is then parsed where it
// stands, its two bytes around it made '[' and ']' for the while, rather than from a copy (the pieces of a
// 1M-value plan are most of its text). Its bytes are as they were when this returns or throws.
struct EditedText {
  std::vector<std::string> inserted;
  std::vector<std::string_view> pieces;
};
EditedText edit_text(std::string_view text, size_t readable, const std::vector<PlanEdit>& edits,
                     const std::string& source, const std::vector<TextSection>* sections = nullptr,
                     char* writable = nullptr);

// choose_corruption and apply_edits on a tree (the tests' form). Returns false (plan unchanged) when the plan has
// no place for the corruption; `what` describes the change.
bool corrupt_plan(nlohmann::ordered_json& plan, Corruption kind, uint64_t seed, std::string& what, int body = -1);
int count_bodies(const nlohmann::ordered_json& plan);

}  // namespace memplan::plan_doc
