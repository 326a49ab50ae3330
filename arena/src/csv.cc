// MiniMalloc's CSV: the problem format `memplan solve` reads and `memplan plan --export-problem` writes.
#include "memplan/arena/csv.h"

#include <algorithm>
#include <sstream>

#include "memplan/error.h"
#include "memplan/file_kind.h"

namespace memplan::arena {

Problem read_minimalloc_csv(const std::string& text, const std::string& source) {
  expect_file_kind(text, source, FileKind::kText);
  Problem p;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) fail_input(source, "empty file; expected MiniMalloc's CSV header id,lower,upper,size");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> header;
  {
    std::stringstream hs(line);
    std::string col;
    while (std::getline(hs, col, ',')) header.push_back(col);
  }
  auto col_of = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  int c_id = col_of("id"), c_lo = col_of("lower"), c_up = col_of("upper"), c_size = col_of("size"),
      c_align = col_of("alignment");
  if (c_id < 0 || c_lo < 0 || c_up < 0 || c_size < 0)
    fail_input(source, "the header must name id, lower, upper and size (MiniMalloc's CSV), got '" + line + "'");
  size_t row = 1;
  while (std::getline(in, line)) {
    ++row;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) cells.push_back(cell);
    auto num = [&](int c, const char* what) -> int64_t {
      if (c >= static_cast<int>(cells.size())) fail_input(source, "line " + std::to_string(row) + ": missing " + what);
      try {
        size_t used = 0;
        long long v = std::stoll(cells[c], &used);
        if (used != cells[c].size()) throw std::invalid_argument("trailing");
        return v;
      } catch (const std::out_of_range&) {
        fail_input(source, "line " + std::to_string(row) + ": " + what + " '" + cells[c] +
                               "' is out of range (at most 9223372036854775807)");
      } catch (const std::exception&) {
        fail_input(source, "line " + std::to_string(row) + ": " + what + " '" + cells[c] + "' is not an integer");
      }
    };
    Buffer b;
    if (c_id >= static_cast<int>(cells.size()) || cells[c_id].empty())
      fail_input(source, "line " + std::to_string(row) + ": missing id");
    b.id = cells[c_id];
    b.lower = num(c_lo, "lower");
    b.upper = num(c_up, "upper");
    int64_t size = num(c_size, "size");
    if (size < 0) fail_input(source, "line " + std::to_string(row) + ": negative size");
    if (b.upper < b.lower) fail_input(source, "line " + std::to_string(row) + ": upper < lower");
    b.size = static_cast<uint64_t>(size);
    if (c_align >= 0 && c_align < static_cast<int>(cells.size()) && !cells[c_align].empty()) {
      int64_t a = num(c_align, "alignment");
      if (a <= 0) fail_input(source, "line " + std::to_string(row) + ": alignment must be positive");
      b.alignment = static_cast<uint64_t>(a);
    }
    p.buffers.push_back(b);
  }
  return p;
}

std::string write_minimalloc_csv(const Problem& p, const std::vector<uint64_t>* offsets) {
  std::ostringstream out;
  bool aligned = std::any_of(p.buffers.begin(), p.buffers.end(), [](const Buffer& b) { return b.alignment > 1; });
  out << "id,lower,upper,size" << (aligned ? ",alignment" : "") << (offsets ? ",offset" : "") << "\n";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const Buffer& b = p.buffers[i];
    out << b.id << "," << b.lower << "," << b.upper << "," << b.size;
    if (aligned) out << "," << b.alignment;
    if (offsets) out << "," << (*offsets)[i];
    out << "\n";
  }
  return out.str();
}

}  // namespace memplan::arena
