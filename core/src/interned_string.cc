#include "memplan/interned_string.h"

#include <array>
#include <cstring>
#include <mutex>
#include <unordered_set>

namespace memplan {
namespace {

struct Table {
  std::mutex lock;
  std::unordered_set<std::string> strings;  // nodes never move: the pointers handed out stay valid
};

Table& table() {
  static Table* t = new Table;  // never destroyed: static InternedStrings may outlive any order of destruction
  return *t;
}

}  // namespace

const std::string* InternedString::intern(std::string_view s) {
  // The last few strings this thread interned: a plan's kinds, devices and dtypes repeat value after value.
  constexpr size_t kCached = 16;
  thread_local std::array<const std::string*, kCached> recent{};
  thread_local size_t next = 0;
  for (const std::string* r : recent)
    if (r && r->size() == s.size() && (s.empty() || std::memcmp(r->data(), s.data(), s.size()) == 0)) return r;
  const std::string* found;
  {
    Table& t = table();
    std::lock_guard<std::mutex> hold(t.lock);
    found = &*t.strings.emplace(s).first;
  }
  recent[next] = found;
  next = (next + 1) % kCached;
  return found;
}

}  // namespace memplan
