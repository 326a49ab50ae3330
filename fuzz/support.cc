#include "support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "memplan/cli/run.h"
#include "memplan/text_escape.h"

namespace memplan::fuzz {

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/memplan-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) {
      std::perror("memplan fuzz: mkdtemp");
      std::abort();
    }
    static const std::string keep = pattern;
    // MEMPLAN_FUZZ_KEEP=1: keep the files of the last input (to reproduce a finding with the memplan executable).
    if (const char* k = std::getenv("MEMPLAN_FUZZ_KEEP"); k && std::string(k) == "1") {
      std::cerr << "memplan fuzz: scratch files in " << keep << "\n";
      return pattern;
    }
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return pattern;
  }();
  return dir;
}

std::string write_scratch(const std::string& name, const std::string& bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::perror("memplan fuzz: write");
    std::abort();
  }
  return path;
}

std::string write_scratch(const std::string& name, const uint8_t* data, size_t size) {
  return write_scratch(name, std::string(reinterpret_cast<const char*>(data), size));
}

void finding(const std::string& what, const CliResult& result) {
  std::cerr << "memplan fuzz finding: " << what << "\n  exit code " << result.rc
            << "\n  stderr: " << result.err.substr(0, 4000) << "\n";
  std::abort();
}

CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  CliResult r;
  r.rc = memplan::cli::run(args);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  r.out = std::move(out).str();
  r.err = std::move(err).str();
  std::string command = "memplan";
  for (const auto& a : args) command += " " + a;
  if (r.rc < 0 || r.rc > 4) finding(command + ": exit code outside the documented 0-4", r);
  static int internal_errors_seen = 0;
  if (memplan::cli::internal_errors() != internal_errors_seen) {
    internal_errors_seen = memplan::cli::internal_errors();
    finding(command + ": internal error", r);
  }
  for (const std::string* text : {&r.out, &r.err})
    for (unsigned char c : *text)
      if (memplan::is_control_byte(c))
        finding(command + ": control character " + std::to_string(c) + " reached the terminal", r);
  return r;
}

void check_markup(const std::string& path, const CliResult& result) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // not written (the command failed)
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = std::move(buffer).str();
  static const std::set<std::string> allowed = {
      "svg",   "g",       "line",     "rect", "text", "title", "tspan",    "style",  "html",   "head",  "body",
      "meta",  "h1",      "h2",       "p",    "b",    "input", "script",   "table",  "thead",  "tbody", "tr",
      "td",    "th",      "!DOCTYPE", "?xml", "span", "div",   "label",    "select", "option", "a",     "code",
      "small", "details", "summary",  "ul",   "li",   "path",  "polyline", "button", "br"};
  std::map<std::string, int> counts;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c != '\r' && memplan::is_control_byte(c))
      finding(path + ": control character " + std::to_string(c) + " at byte " + std::to_string(i), result);
    if (c != '<') continue;
    size_t j = i + 1;
    if (j < text.size() && text[j] == '/') ++j;
    size_t k = j;
    while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) || text[k] == '!' || text[k] == '?'))
      ++k;
    const std::string tag = text.substr(j, k - j);
    if (!allowed.count(tag)) finding(path + ": element <" + tag + "> at byte " + std::to_string(i), result);
    if (j == i + 1) ++counts[tag];
  }
  if (counts["script"] > 1) finding(path + ": more than one <script>", result);
}

const std::string& source_file(const std::string& relative) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(relative);
  if (it != cache.end()) return it->second;
  std::ifstream in(std::string(MEMPLAN_SOURCE_DIR) + "/" + relative, std::ios::binary);
  if (!in) {
    std::cerr << "memplan fuzz: cannot read " << relative << "\n";
    std::abort();
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return cache[relative] = std::move(buffer).str();
}

}  // namespace memplan::fuzz
