// A string from a small vocabulary (an allocation kind, a device, a dtype, an op type), held as one pointer to a
// process-wide copy: 8 bytes in each of a plan's million values instead of a std::string's 32, and compared by
// pointer. Reads like a const std::string; assigning interns. The copies live until the process ends.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

namespace memplan {

class InternedString {
 public:
  InternedString() : s_(intern({})) {}
  InternedString(std::string_view s) : s_(intern(s)) {}    // NOLINT(google-explicit-constructor): reads as a string
  InternedString(const std::string& s) : s_(intern(s)) {}  // NOLINT(google-explicit-constructor)
  InternedString(const char* s) : s_(intern(s)) {}         // NOLINT(google-explicit-constructor)

  const std::string& str() const { return *s_; }
  operator const std::string&() const { return *s_; }  // NOLINT(google-explicit-constructor)
  bool empty() const { return s_->empty(); }
  size_t size() const { return s_->size(); }
  const char* c_str() const { return s_->c_str(); }
  const char* data() const { return s_->data(); }
  std::string_view view() const { return *s_; }

  friend bool operator==(const InternedString& a, const InternedString& b) { return a.s_ == b.s_; }
  // As string_views: the sizes first (GCC 12's std::string == const char* calls memcmp whatever the sizes, and a
  // plan's checks compare a million step kinds and op types with literals).
  friend bool operator==(const InternedString& a, const std::string& b) { return a.view() == std::string_view(b); }
  friend bool operator==(const InternedString& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const InternedString& a, const char* b) { return a.view() == std::string_view(b); }
  friend auto operator<=>(const InternedString& a, const InternedString& b) { return *a.s_ <=> *b.s_; }
  friend std::string operator+(const InternedString& a, const std::string& b) { return *a.s_ + b; }
  friend std::string operator+(const std::string& a, const InternedString& b) { return a + *b.s_; }
  friend std::string operator+(const InternedString& a, const char* b) { return *a.s_ + b; }
  friend std::string operator+(const char* a, const InternedString& b) { return a + *b.s_; }
  friend std::ostream& operator<<(std::ostream& out, const InternedString& s) { return out << *s.s_; }

 private:
  // The one copy of `s` (thread-safe; a small per-thread cache answers the repeats a reader meets).
  static const std::string* intern(std::string_view s);
  const std::string* s_;
};

}  // namespace memplan
