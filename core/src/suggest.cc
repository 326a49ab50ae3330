#include "memplan/suggest.h"

#include <algorithm>
#include <cctype>

namespace memplan {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Levenshtein distance with transpositions counted as one edit (optimal string alignment).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string w = lower(word);
  std::string best;
  size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const std::string lc = lower(c);
    size_t d = edit_distance(w, lc);
    // A prefix ("seq" for "sequence", "--stream" for "--streams-per-device") or a substring is a good hint too.
    bool contains = w.size() >= 3 && (lc.find(w) != std::string::npos || w.find(lc) != std::string::npos);
    size_t limit = std::max<size_t>(1, std::min(w.size(), lc.size()) / 3);
    if (d > limit && !contains) continue;
    if (contains && d > limit) d = limit + 1;  // ranks after real typos
    if (best.empty() || d < best_distance) best = c, best_distance = d;
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string c = closest_name(word, candidates);
  return c.empty() ? "" : " Did you mean '" + c + "'?";
}

}  // namespace memplan
