// The memplan command line as a function: main() and the fuzz targets call it.
#include "memplan/cli/run.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "common.h"
#include "memplan/error.h"
#include "memplan/progress.h"
#include "memplan/text_escape.h"

namespace memplan::cli {

void ShapeOptions::add_to(CLI::App& app, bool sweep) {
  app.add_option("--dim", dims,
                 sweep ? "Fix a free (symbolic) dimension by its dim_param name, e.g. --dim N=1 (repeatable). A list "
                         "(batch=1,8,32) or range (batch=1..64:x2 doubling, seq=128..512:+128 stepping, 1..4 every "
                         "integer) plans once per value and prints a table"
                       : "Fix a free (symbolic) dimension by its dim_param name, e.g. --dim N=1 (repeatable)");
  app.add_option("--input-shape", input_shapes,
                 "Fix a graph input's whole shape, e.g. --input-shape input=1x3x224x224 (repeatable)");
  app.add_option("--trip-count", trip_counts,
                 "Plan a Loop whose iteration count is known only at run time (an input, or a condition that can end "
                 "it early) for N iterations, by node name, e.g. --trip-count decode_loop=32 (repeatable): its scan "
                 "outputs, N slices, get a size");
  app.add_flag("--no-ort-rewrites", no_ort_rewrites,
               "Keep the graph as written: by default memplan rewrites it at load as ONNX Runtime does (duplicate Cast "
               "pairs removed; calls of the model's own functions inlined; the function ops ORT's CPU provider has no kernel for expanded into their ONNX function "
               "bodies: HardSwish, CastLike, SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, Bernoulli, "
               "SequenceMap, and from opset 18 GroupNormalization, Mish, CenterCropPad and Swish)");
  app.add_option("--nchwc-block-size", nchwc_block_size,
                 "Channel block of ONNX Runtime's NCHWc layout ops (com.microsoft.nchwc, in models ORT saved at level "
                 "'all'): ReorderInput pads channels to it. 16 where ORT ran on AVX-512, 8 on AVX2; by default read "
                 "from the model (16 when every NCHWc Conv's output channels are a multiple of 16, else 8)")
      ->check(CLI::IsMember({8, 16}));
}

namespace {

// "batch=1,8,32" or "batch=1..64:x2": a --dim that sweeps a dimension.
bool is_swept(const std::string& dim) {
  auto eq = dim.rfind('=');
  return eq != std::string::npos && (dim.find(',', eq) != std::string::npos || dim.find("..", eq) != std::string::npos);
}

// Adds NAME=VALUE to `into`; the same name given again with another value is refused (which would win is not for
// memplan to guess, and the plan records what was given).
template <typename V>
void add_override(std::map<std::string, V>& into, std::pair<std::string, V> given, const std::string& option,
                  const std::string& text) {
  auto [it, inserted] = into.insert(given);
  if (!inserted && it->second != given.second)
    fail_usage(option + " " + given.first + " is given twice, with different values (" + text +
               " is the second); give it once");
}

}  // namespace

onnx_io::LoadOptions ShapeOptions::load_options(const std::vector<std::string>& point) const {
  onnx_io::LoadOptions options;
  for (const auto& d : point) {
    if (is_swept(d)) fail_usage("--dim " + d + ": lists and ranges sweep a dimension, which only 'memplan plan' does");
    add_override(options.overrides.dims, onnx_io::parse_dim_override(d), "--dim", d);
  }
  for (const auto& s : input_shapes)
    add_override(options.overrides.input_shapes, onnx_io::parse_input_shape(s), "--input-shape", s);
  for (const auto& t : trip_counts)
    add_override(options.overrides.trip_counts, onnx_io::parse_trip_count(t), "--trip-count", t);
  options.ort_rewrites = !no_ort_rewrites;
  options.nchwc_block_size = nchwc_block_size;
  return options;
}

onnx_io::LoadOptions ShapeOptions::load_options() const {
  return load_options(dims);
}

namespace {

int64_t sweep_number(const std::string& text, const std::string& option) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < 0)
    fail_usage("--dim " + option + ": '" + text + "' is not a non-negative integer");
  return v;
}

// "1,8,32", "1..64:x2", "128..512:+128", "1..4" -> the values, in order, without repeats.
std::vector<int64_t> sweep_values(const std::string& spec, const std::string& option) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t dots = item.find("..");
    if (dots == std::string::npos) {
      out.push_back(sweep_number(item, option));
    } else {
      std::string rest = item.substr(dots + 2), step = "+1";
      if (auto colon = rest.find(':'); colon != std::string::npos) step = rest.substr(colon + 1), rest.resize(colon);
      int64_t lo = sweep_number(item.substr(0, dots), option), hi = sweep_number(rest, option);
      if (step.size() < 2 || (step[0] != 'x' && step[0] != '+'))
        fail_usage("--dim " + option + ": a range's step is :xK (multiply) or :+K (add), got ':" + step + "'");
      int64_t k = sweep_number(step.substr(1), option);
      if (lo > hi) fail_usage("--dim " + option + ": the range " + item + " is empty");
      if ((step[0] == 'x' && (k < 2 || lo == 0)) || (step[0] == '+' && k < 1))
        fail_usage("--dim " + option + ": the range " + item + " never ends (use :x2 from 1 up, or :+K with K >= 1)");
      for (int64_t v = lo; v <= hi; v = step[0] == 'x' ? v * k : v + k) {
        out.push_back(v);
        if (out.size() > 256) break;
      }
    }
    if (out.size() > 256) fail_usage("--dim " + option + ": more than 256 values; sweep fewer");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<int64_t> unique;
  for (int64_t v : out)
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  return unique;
}

}  // namespace

std::vector<std::vector<std::string>> ShapeOptions::sweep_points() const {
  // A name given twice is refused here too, before the first point is planned (by its text: a sweep is not parsed yet).
  std::map<std::string, std::string> given;
  for (const auto& d : dims) add_override(given, {d.substr(0, d.rfind('=')), d.substr(d.rfind('=') + 1)}, "--dim", d);
  std::vector<std::vector<std::string>> points{{}};
  for (const auto& d : dims) {
    if (!is_swept(d)) {
      for (auto& p : points) p.push_back(d);
      continue;
    }
    auto eq = d.rfind('=');
    std::vector<std::vector<std::string>> next;
    for (const auto& p : points)
      for (int64_t v : sweep_values(d.substr(eq + 1), d)) {
        next.push_back(p);
        next.back().push_back(d.substr(0, eq) + "=" + std::to_string(v));
      }
    if (next.size() > 256) fail_usage("the --dim sweep has " + std::to_string(next.size()) + " points; at most 256");
    points = std::move(next);
  }
  return points;
}

const CLI::Validator& output_path() {
  static const CLI::Validator v(
      [](std::string& path) { return path.empty() ? std::string("an empty path: name a file") : std::string(); },
      "PATH", "output path");
  return v;
}

void warn(const std::string& message) {
  const auto paused = pause_progress_line();
  std::cerr << "memplan: warning: " << message << "\n";
}

}  // namespace memplan::cli

namespace {

// The subcommand named on the command line (the first word that is one), or "".
std::string chosen_subcommand(const CLI::App& app, const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (!a.empty() && a[0] != '-') {
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        if (sub->get_name() == a) return a;
      return "";
    }
  return "";
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names{"--help"};
  for (const CLI::Option* o : app.get_options([](const CLI::Option*) { return true; })) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& sn : o->get_snames()) names.push_back("-" + sn);
  }
  return names;
}

// A parse error as one line that says what to do: unknown commands and options get a suggestion.
std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args) {
  const std::string sub = chosen_subcommand(app, args);
  const std::string help = sub.empty() ? "memplan --help" : "memplan " + sub + " --help";
  auto names = subcommand_names(app);
  if (sub.empty()) {
    for (const auto& a : args)
      if (!a.empty() && a[0] != '-') {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        return "unknown command '" + a + "'." + memplan::did_you_mean(a, names) + " Commands: " + list + ".";
      }
    if (std::string(e.what()).find("subcommand is required") != std::string::npos)
      return "no command given; run 'memplan --help' for the list, or 'memplan help COMMAND'";
  }
  const CLI::App* cmd = sub.empty() ? &app : app.get_subcommand(sub);
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::string out;
    for (const auto& extra : cmd->remaining())
      if (!extra.empty() && extra[0] == '-')
        out += (out.empty() ? "" : " ") + std::string("unknown option '") + extra.substr(0, extra.find('=')) + "'." +
               memplan::did_you_mean(extra.substr(0, extra.find('=')), option_names(*cmd));
    if (!out.empty()) return (sub.empty() ? "" : sub + ": ") + out + " ('" + help + "' lists them)";
  }
  return (sub.empty() ? "" : sub + ": ") + std::string(e.what()) + " ('" + help + "' for the options)";
}

}  // namespace

namespace memplan::cli {

namespace {

int internal_error_count = 0;

// Passes text to `target` with control characters shown as \xNN (see terminal_text): names from a model or plan
// reach the terminal through every message and report, and none may move the cursor or forge a line. Newlines
// and tabs pass. File contents written to stdout ("-o -") go around it (write_file_atomically).
class PrintableBuffer : public std::streambuf {
 public:
  explicit PrintableBuffer(std::streambuf* target) : target_(target) {}

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    const auto c = static_cast<unsigned char>(ch);
    if (is_control_byte(c)) {
      const char byte = static_cast<char>(c);
      const std::string shown = terminal_text(std::string_view(&byte, 1));
      const auto n = static_cast<std::streamsize>(shown.size());
      return target_->sputn(shown.data(), n) == n ? ch : traits_type::eof();
    }
    return traits_type::eq_int_type(target_->sputc(static_cast<char>(c)), traits_type::eof()) ? traits_type::eof() : ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i)
      if (traits_type::eq_int_type(overflow(traits_type::to_int_type(s[i])), traits_type::eof())) return i;
    return n;
  }
  int sync() override { return target_->pubsync(); }

 private:
  std::streambuf* target_;
};

// Installs PrintableBuffer on std::cout and std::cerr for one command.
class PrintableStreams {
 public:
  PrintableStreams()
      : out_(std::cout.rdbuf()),
        err_(std::cerr.rdbuf()),
        old_out_(std::cout.rdbuf(&out_)),
        old_err_(std::cerr.rdbuf(&err_)) {}
  ~PrintableStreams() {
    std::cout.flush();
    std::cerr.flush();
    std::cout.rdbuf(old_out_);
    std::cerr.rdbuf(old_err_);
  }
  PrintableStreams(const PrintableStreams&) = delete;
  PrintableStreams& operator=(const PrintableStreams&) = delete;

 private:
  PrintableBuffer out_, err_;
  std::streambuf *old_out_, *old_err_;
};

}  // namespace

int internal_errors() {
  return internal_error_count;
}

namespace {
bool ends_after_run = false;
}  // namespace

void set_process_ends_after_run(bool ends) {
  ends_after_run = ends;
}

bool process_ends_after_run() {
  return ends_after_run;
}

int run(const std::vector<std::string>& command_line, const std::string& allocator) {
  PrintableStreams printable;
  CLI::App app{
      "memplan plans the memory of an ONNX model ahead of time: where every tensor lives, when it is\n"
      "released, and at which offset of a per-device arena.\n\n"
      "Exit codes: 0 success, 1 bad input (model, config or plan invalid or incomplete; file missing), 2 usage\n"
      "error, 3 a plan failed validation or replay, 4 a budget was exceeded. diff: 0 equal, 1 different,\n"
      "2 could not compare, 4 grown past --fail-if-grows.\n\n"
      "Environment: MEMPLAN_PROGRESS=0 or 1 turns the status line of long stages off or on (default: on when\n"
      "stderr is a terminal); MEMPLAN_MAX_INPUT_BYTES=N caps the bytes read from one file (2 GiB);\n"
      "MEMPLAN_NO_ISOLATION=1 runs ONNX's inference in this process instead of a child (for debugging).",
      "memplan"};
  app.set_version_flag("--version", std::string("memplan ") + MEMPLAN_VERSION + " (" + allocator + ")");
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  memplan inspect model.onnx                       # sizes, free dims, op types\n"
      "  memplan plan model.onnx --dim batch=8 -o plan.json\n"
      "  memplan plan model.onnx --device gpu --dim batch=8 --max-arena gpu:0=4GiB -o plan.json\n"
      "  memplan inspect plan.json --html plan.html\n"
      "  memplan diff last-release.json plan.json --fail-if-grows 5%\n"
      "  memplan help plan                                # one command's options and examples");
  register_inspect(app);
  register_shapes(app);
  register_partition(app);
  register_plan(app);
  register_reorder(app);
  register_solve(app);
  register_validate(app);
  int exit_status = 0;  // what a command that ran to its end returns (diff: 1 when the plans differ)
  register_diff(app, exit_status);
  register_corrupt(app);
  register_replay(app);
  register_docs(app);

  // `memplan help [COMMAND]` is `memplan [COMMAND] --help`.
  std::vector<std::string> args = command_line;
  if (!args.empty() && args[0] == "help") {
    args.erase(args.begin());
    if (args.size() > 1) args.resize(1);
    auto names = subcommand_names(app);
    if (!args.empty() && std::find(names.begin(), names.end(), args[0]) == names.end()) {
      std::cerr << "memplan: error: help: no command '" << args[0] << "'." << memplan::did_you_mean(args[0], names)
                << " Run 'memplan --help' for the list.\n";
      return static_cast<int>(ExitCode::kUsage);
    }
    args.push_back("--help");
  }
  const std::string sub = chosen_subcommand(app, args);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "memplan: error: " << explain_parse_error(app, e, args) << "\n";
    return static_cast<int>(ExitCode::kUsage);
  } catch (const Error& e) {
    std::cerr << "memplan: error: " << e.what() << "\n";
    // diff's errors mean "could not compare" (2), never "different" (1, its outcome: exit_status).
    if (sub == "diff" && e.code() == ExitCode::kBadInput) return static_cast<int>(ExitCode::kUsage);
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    // Anything else is a bug in memplan, not the user's fault; still no crash.
    ++internal_error_count;
    std::cerr << "memplan: internal error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kBadInput);
  }
  return exit_status;
}

}  // namespace memplan::cli
