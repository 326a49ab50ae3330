// Fuzz target: any bytes as a plan file, through every command that reads plans: validate, inspect (text,
// JSON, SVG, HTML), diff, corrupt and replay (CPU). The pictures must contain no element a plan string put there.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "memplan/error.h"
#include "memplan/plan_doc/plan_doc.h"
#include "support.h"

using namespace memplan::fuzz;

namespace {

// What a reader made of the plan: its error, or a digest of what it read.
std::string outcome(const std::function<memplan::plan_doc::PlanDoc()>& read) {
  try {
    const memplan::plan_doc::PlanDoc d = read();
    std::string digest = std::to_string(d.version) + d.graph + d.model_path;
    for (const auto& v : d.values)
      digest += v.name + v.kind + std::to_string(v.offset) + std::to_string(v.bytes.value_or(7)) +
                std::to_string(v.consumers.size()) + std::to_string(v.first_use) + std::to_string(v.arena) + ";";
    for (const auto& n : d.nodes)
      digest += n.name + n.op_type + std::to_string(n.inputs.size()) + std::to_string(n.outputs.size()) +
                std::to_string(n.stream) + ";";
    return digest + std::to_string(d.streams.size()) + std::to_string(d.subgraphs.size());
  } catch (const memplan::Error& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string plan = write_scratch("plan.json", data, size);
  const std::string dir = scratch_dir();
  // The reader in pieces on two threads (forced on any size here) agrees with the one-pass reader: the same plan or the
  // same error.
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string one = outcome([&] { return memplan::plan_doc::read_plan_doc(text, plan); });
  // (in pieces of about 4 MiB, and of one node or value each)
  for (const size_t piece_bytes : {memplan::plan_doc::kPieceBytes, size_t{1}}) {
    const std::string two = outcome([&] { return memplan::plan_doc::read_plan_file(plan, 0, piece_bytes); });
    if (one != two) {
      std::fprintf(stderr, "one pass:    %s\ntwo threads: %s\n", one.substr(0, 300).c_str(),
                   two.substr(0, 300).c_str());
      std::abort();
    }
  }
  const CliResult checked = run_cli({"validate", plan, "--allow-unknown-sizes"});
  run_cli({"inspect", plan});
  run_cli({"inspect", plan, "--json"});
  std::remove((dir + "/plan.svg").c_str());
  std::remove((dir + "/plan.html").c_str());
  const CliResult pictured = run_cli({"inspect", plan, "--svg", dir + "/plan.svg", "--html", dir + "/plan.html"});
  check_markup(dir + "/plan.svg", pictured);
  check_markup(dir + "/plan.html", pictured);
  run_cli({"diff", plan, plan});
  static const char* const kinds[] = {"offset", "wait", "barrier", "release", "shrink", "misalign", "kind"};
  run_cli({"corrupt", plan, "--kind", kinds[size % 7], "--seed", std::to_string(size % 5), "-o", dir + "/bad.json"});
  // Replay runs what validate accepted (as a user would); it must finish, whatever the plan says.
  if (checked.rc == 0) run_cli({"replay", plan, "--timeout", "2", "--sample"});
  return 0;
}
