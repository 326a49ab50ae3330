// apply_edits on a plan's text: one On-Demand pass finds the bytes of every edited value (descending only along the
// edits' paths, skipping the rest), then the text is copied once with those bytes replaced. Where the reader said
// where the top-level keys stand, the pass parses only the sections the edits are in (a 1M-node plan's nodes are a
// quarter of its text, and parsing is most of the time), and of a list the reader read in pieces, only the pieces
// holding the edited elements (a 1M-value plan's values are 70% of it).
#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "memplan/error.h"
#include "memplan/plan_doc/corrupt.h"

namespace memplan::plan_doc {

namespace {

namespace od = simdjson::ondemand;

// The edits' paths as a tree: the members and elements to descend into, and the edits that end at each value.
// Children in vectors, elements by ascending index: a corruption that moves a 500k-value in-place chain makes 500k
// edits, and a map node per step was a third of its editing time.
struct KeyChild;
struct IndexChild;
struct Trie {
  std::vector<KeyChild> keys;
  std::vector<IndexChild> indices;  // ascending
  std::vector<const PlanEdit*> edits;
};
struct KeyChild {
  std::string first;
  Trie second;
};
struct IndexChild {
  size_t first;
  Trie second;
};

Trie& key_child(Trie& t, const std::string& key) {
  for (auto& [k, child] : t.keys)
    if (k == key) return child;
  t.keys.push_back(KeyChild{key, Trie{}});
  return t.keys.back().second;
}

// (Edits come mostly in ascending order: appended at the end.)
Trie& index_child(Trie& t, size_t index) {
  auto& list = t.indices;
  if (list.empty() || list.back().first < index) {
    list.push_back(IndexChild{index, Trie{}});
    return list.back().second;
  }
  auto it =
      std::lower_bound(list.begin(), list.end(), index, [](const IndexChild& x, size_t i) { return x.first < i; });
  if (it == list.end() || it->first != index) it = list.insert(it, IndexChild{index, Trie{}});
  return it->second;
}

const Trie* find_key(const Trie& t, std::string_view key) {
  for (const auto& [k, child] : t.keys)
    if (k == key) return &child;
  return nullptr;
}

// The edited elements of one piece of a list, a run of its trie's `indices`: the piece's first element is the list's
// element `first`.
struct IndexSlice {
  const IndexChild* begin = nullptr;
  const IndexChild* end = nullptr;
  size_t first = 0;
};

struct Replacement {
  size_t begin = 0, end = 0;
  std::string text;
};

class TextEditor {
 public:
  // `limit`: the end of the part of the text parsed (a list that closes the part ends there).
  TextEditor(std::string_view text, size_t limit, const std::string& source, size_t edits)
      : text_(text), limit_(limit), source_(source), edits_(edits) {
    out_.reserve(edits);
  }

  void walk(od::document& doc, const Trie& root) {
    od::value top = take(doc.get_value());
    value(top, root);
  }
  // A piece of a list (the document is its elements in brackets): each edited element, and no further than the last.
  void walk_piece(od::document& doc, const IndexSlice& slice) {
    od::value top = take(doc.get_value());
    od::array list = take(top.get_array());
    size_t n = slice.first;
    const auto* next_edited = slice.begin;
    for (auto r : list) {
      if (next_edited == slice.end) return;
      od::value e = take(std::move(r));
      if (next_edited->first == n) {
        value(e, next_edited->second);
        ++next_edited;
        if (done()) return;
      }
      ++n;
    }
  }
  std::vector<Replacement>& replacements() { return out_; }
  size_t located() const { return located_; }

 private:
  template <typename T>
  T take(simdjson::simdjson_result<T>&& r) {
    T out;
    if (const simdjson::error_code code = std::move(r).get(out))
      fail_input(source_, std::string("cannot edit the plan: ") + simdjson::error_message(code));
    return out;
  }
  size_t at(const char* p) const { return static_cast<size_t>(p - text_.data()); }
  bool space(size_t i) const { return text_[i] == ' ' || text_[i] == '\n' || text_[i] == '\r' || text_[i] == '\t'; }
  // The indentation of the line holding byte i.
  std::string indent_at(size_t i) const {
    const size_t line = text_.rfind('\n', i);
    const size_t from = line == std::string_view::npos ? 0 : line + 1;
    size_t n = 0;
    while (from + n < text_.size() && text_[from + n] == ' ') ++n;
    return std::string(n, ' ');
  }

  void value(od::value& v, const Trie& t) {
    for (const PlanEdit* e : t.edits)
      if (e->op == PlanEdit::Op::kSet) {
        std::string_view token = v.raw_json_token();
        while (!token.empty() && space(at(token.data()) + token.size() - 1)) token.remove_suffix(1);
        out_.push_back({at(token.data()), at(token.data()) + token.size(), e->value.dump()});
        ++located_;
        return;
      }
    if (!t.keys.empty()) {
      od::object object = take(v.get_object());
      for (auto r : object) {
        od::field field = take(std::move(r));
        const std::string_view key = take(field.unescaped_key());
        const Trie* child = find_key(t, key);
        if (!child) continue;
        od::value x = field.value();
        value(x, *child);
        if (done()) return;
      }
      return;
    }
    const bool appends =
        std::any_of(t.edits.begin(), t.edits.end(), [](const PlanEdit* e) { return e->op == PlanEdit::Op::kAppend; });
    if (t.indices.empty() && !appends) return;
    const size_t open = at(v.raw_json_token().data());
    od::array list = take(v.get_array());
    std::map<size_t, size_t> starts;  // of erased elements and of the ones after them
    size_t n = 0, last_start = 0;
    // The edited elements in order, met as the list is walked (a lookup per element was three at 1M elements).
    auto next_edited = t.indices.begin();
    bool previous_edited = false;
    for (auto r : list) {
      od::value e = take(std::move(r));
      last_start = at(e.raw_json_token().data());
      const bool edited = next_edited != t.indices.end() && next_edited->first == n;
      if (edited || previous_edited) starts[n] = last_start;
      if (edited) {
        value(e, next_edited->second);
        ++next_edited;
        if (done()) return;  // (this list's own erasures and appends would not be counted yet)
      }
      previous_edited = edited;
      ++n;
    }
    // The list's ']': the last bytes before the next structural character (the list is a member or an element).
    const char* next = nullptr;
    size_t close = limit_;
    if (v.current_location().get(next) == simdjson::SUCCESS) close = at(next);
    while (close > open && text_[close - 1] != ']') --close;
    --close;
    size_t end_last = close;  // one past the last element's last byte
    while (end_last > open + 1 && space(end_last - 1)) --end_last;
    for (const auto& [k, child] : t.indices)
      for (const PlanEdit* e : child.edits) {
        if (e->op != PlanEdit::Op::kErase) continue;
        if (k >= n) fail_input(source_, "cannot edit the plan: element " + std::to_string(k) + " is not in its list");
        ++located_;
        if (n == 1) {
          out_.push_back({open, close + 1, "[]"});
        } else if (k + 1 < n) {
          out_.push_back({starts[k], starts[k + 1], ""});
        } else {
          size_t comma = starts[k];
          while (comma > open && text_[comma - 1] != ',') --comma;
          out_.push_back({comma - 1, end_last, ""});
        }
      }
    for (const PlanEdit* e : t.edits) {
      if (e->op != PlanEdit::Op::kAppend) continue;
      ++located_;
      if (n == 0) {
        const std::string indent = indent_at(open);
        out_.push_back({open, close + 1, "[\n" + indent + " " + e->value.dump() + "\n" + indent + "]"});
      } else {
        out_.push_back({end_last, end_last, ",\n" + indent_at(last_start) + e->value.dump()});
      }
    }
  }

  std::string_view text_;
  size_t limit_;
  const std::string& source_;
  std::vector<Replacement> out_;
  size_t located_ = 0;
  const size_t edits_;
  bool done() const { return located_ == edits_; }  // (then the rest of the text need not be walked)
};

// The bytes of the value of top-level `key` in `text`, from where `sections` says the keys stand: its first byte
// and one past its last. nullopt when the text is not as they say.
std::optional<std::pair<size_t, size_t>> section_value(std::string_view text, const std::vector<TextSection>& sections,
                                                       const std::string& key) {
  auto space = [&](size_t i) { return text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'; };
  for (size_t i = 0; i + 1 < sections.size(); ++i) {
    if (sections[i].key != key) continue;
    size_t begin = sections[i].at + key.size() + 2;  // past the key's quotes (memplan's keys have no escapes)
    if (begin > text.size() || text.substr(sections[i].at, key.size() + 2) != "\"" + key + "\"") return std::nullopt;
    while (begin < text.size() && space(begin)) ++begin;
    if (begin >= text.size() || text[begin] != ':') return std::nullopt;
    ++begin;
    while (begin < text.size() && space(begin)) ++begin;
    size_t end = sections[i + 1].at;  // back over the space and the ',' before the next key
    if (end > text.size()) return std::nullopt;
    while (end > begin && space(end - 1)) --end;
    if (end <= begin || text[end - 1] != ',') return std::nullopt;
    --end;
    while (end > begin && space(end - 1)) --end;
    return std::make_pair(begin, end);
  }
  return std::nullopt;
}

size_t count_edits(const Trie& t) {
  size_t n = t.edits.size();
  for (const auto& [key, child] : t.keys) n += count_edits(child);
  for (const auto& [index, child] : t.indices) n += count_edits(child);
  return n;
}

// A list's pieces with the elements before the first piece as one more (the reader reads them with the text around
// the list: memplan's first value): from the list's first element to the ',' before the first piece.
std::vector<TextPiece> with_leading_piece(std::string_view text, std::pair<size_t, size_t> list,
                                          const std::vector<TextPiece>& pieces) {
  auto space = [&](size_t i) { return text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'; };
  if (pieces.empty() || pieces.front().first == 0 || text[list.first] != '[') return pieces;
  size_t begin = list.first + 1, end = pieces.front().begin - 1;
  while (begin < end && space(begin)) ++begin;
  while (end > begin && space(end - 1)) --end;
  if (end <= begin || text[end - 1] != ',') return pieces;
  std::vector<TextPiece> out = {{0, pieces.front().first, begin, end - 1}};
  out.insert(out.end(), pieces.begin(), pieces.end());
  return out;
}

// The edits of a list read in pieces, by piece, when each ends inside one element of the list (none erases an
// element or adds one, which needs the whole list): each piece's run of `list`'s edited elements. Empty when they
// cannot be made this way. (Runs, not tries of their own: moving the elements' tries into one per piece was a fifth of
// `corrupt`'s editing when it moved a 500k-value in-place chain.)
std::vector<std::pair<TextPiece, IndexSlice>> edits_by_piece(const Trie& list, const std::vector<TextPiece>& pieces) {
  if (pieces.empty() || !list.edits.empty() || !list.keys.empty()) return {};
  auto piece_of = [&](size_t index) {
    return std::prev(std::upper_bound(pieces.begin(), pieces.end(), index,
                                      [](size_t i, const TextPiece& p) { return i < p.first; }));
  };
  for (const auto& [index, child] : list.indices) {
    for (const PlanEdit* e : child.edits)
      if (e->op == PlanEdit::Op::kErase) return {};
    if (index < pieces.front().first) return {};
    if (const auto piece = piece_of(index); index >= piece->first + piece->count) return {};
  }
  std::vector<std::pair<TextPiece, IndexSlice>> out;
  for (const auto& element : list.indices) {
    const auto piece = piece_of(element.first);
    if (out.empty() || out.back().first.first != piece->first)
      out.push_back({*piece, IndexSlice{&element, &element, piece->first}});
    out.back().second.end = &element + 1;
  }
  return out;
}

}  // namespace

EditedText edit_text(std::string_view text, size_t readable, const std::vector<PlanEdit>& edits,
                     const std::string& source, const std::vector<TextSection>* sections, char* writable) {
  Trie root;
  for (const PlanEdit& e : edits) {
    Trie* t = &root;
    for (const std::string& step : e.path)
      t = is_list_index(step) ? &index_child(*t, std::stoul(step)) : &key_child(*t, step);
    t->edits.push_back(&e);
  }
  std::optional<simdjson::padded_string> copy;
  if (readable < text.size() + simdjson::SIMDJSON_PADDING) copy.emplace(text);
  const std::string_view parsed = copy ? std::string_view(copy->data(), copy->size()) : text;
  const size_t parsed_readable = copy ? copy->size() + simdjson::SIMDJSON_PADDING : readable;
  // The parts to parse: each edited top-level section on its own where the sections are known, else the whole text.
  // A piece of a list is parsed as the reader's document of it: its text from the byte before its first element, made
  // '[', to the one after its last, made ']' (in place, or in a copy).
  struct Part {
    size_t begin, end;
    const Trie* trie;  // (null for a piece)
    size_t edits;
    bool piece = false;
    IndexSlice slice;  // a piece's
  };
  std::vector<Part> parts;
  if (sections && root.edits.empty() && root.indices.empty()) {
    for (auto& [key, trie] : root.keys) {
      const auto span = section_value(parsed, *sections, key);
      if (!span) {
        parts.clear();
        break;
      }
      const auto& name = key;  // (Clang 14 cannot capture a structured binding in a lambda)
      const auto section = std::find_if(sections->begin(), sections->end(),
                                        [&](const TextSection& x) { return x.key == name && !x.pieces.empty(); });
      const auto by_piece = section == sections->end()
                                ? std::vector<std::pair<TextPiece, IndexSlice>>{}
                                : edits_by_piece(trie, with_leading_piece(parsed, *span, section->pieces));
      for (const auto& [piece, slice] : by_piece) {
        size_t n = 0;
        for (const auto* e = slice.begin; e != slice.end; ++e) n += count_edits(e->second);
        parts.push_back({piece.begin - 1, piece.end + 1, nullptr, n, true, slice});
      }
      if (by_piece.empty()) parts.push_back({span->first, span->second, &trie, count_edits(trie), false, {}});
    }
  }
  if (parts.empty()) parts.push_back({0, parsed.size(), &root, edits.size(), false, {}});
  // (in place only in the caller's bytes, not in the padded copy)
  char* const in_place = !copy && writable == text.data() ? writable : nullptr;
  // One part: its edits' replacements, placed in the whole text.
  struct Edited {
    size_t located = 0;
    std::vector<Replacement> cuts;
    std::exception_ptr failure;
  };
  auto edit_part = [&](const Part& part, od::parser& parser, Edited& out) {
    od::document doc;
    std::optional<simdjson::padded_string> piece;
    std::string_view from = parsed.substr(part.begin, part.end - part.begin);
    size_t from_readable = parsed_readable - part.begin;
    // A piece parsed in place: its first and last bytes (the ',' or brackets around its elements) swapped with the
    // brackets that make it a list, and swapped back however this part ends.
    struct Brackets {
      char* first = nullptr;
      char* last = nullptr;
      char was_first = 0, was_last = 0;
      ~Brackets() {
        if (first) *first = was_first, *last = was_last;
      }
    } brackets;
    if (part.piece) {
      if (part.begin >= part.end || part.end > parsed.size())
        fail_input(source, "cannot edit the plan: a piece of a list is not where the reader said");
      if (in_place) {
        brackets.first = in_place + part.begin;
        brackets.last = in_place + part.end - 1;
        brackets.was_first = *brackets.first;
        brackets.was_last = *brackets.last;
        *brackets.first = '[';
        *brackets.last = ']';
      } else {
        piece.emplace(from);
        piece->data()[0] = '[';
        piece->data()[piece->size() - 1] = ']';
        from = std::string_view(piece->data(), piece->size());
        from_readable = piece->size() + simdjson::SIMDJSON_PADDING;
      }
    }
    if (const simdjson::error_code code = parser.iterate(from.data(), from.size(), from_readable).get(doc))
      fail_input(source, std::string("cannot edit the plan: ") + simdjson::error_message(code));
    // (the editor counts positions from the start of what it is given: a piece's are moved to the text's)
    TextEditor editor(part.piece ? from : parsed, part.piece ? from.size() : part.end, source, part.edits);
    if (part.piece)
      editor.walk_piece(doc, part.slice);
    else
      editor.walk(doc, *part.trie);
    out.located = editor.located();
    out.cuts = std::move(editor.replacements());
    if (part.piece)
      for (Replacement& r : out.cuts) {
        r.begin += part.begin;
        r.end += part.begin;
      }
  };
  // The parts on two threads (parsing is most of the time: a corruption that moves a 500k-value chain edits 31
  // pieces of the values list). The sections first, then every other piece, then the rest: a piece may open on the
  // byte that closes the one before it in the text, and is parsed with the bytes after its end readable.
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.begin < b.begin; });
  std::vector<int> round_of(parts.size(), 0);
  for (size_t i = 0, pieces = 0; i < parts.size(); ++i)
    if (parts[i].piece) round_of[i] = 1 + static_cast<int>(pieces++ % 2);
  std::vector<Edited> edited(parts.size());
  od::parser parsers[2];  // (one a thread, kept across the rounds: each holds room for the largest part it parsed)
  for (int round = 0; round < 3; ++round) {
    std::vector<size_t> todo;
    for (size_t i = 0; i < parts.size(); ++i)
      if (round_of[i] == round) todo.push_back(i);
    std::atomic<size_t> next{0};
    auto work = [&](od::parser& parser) {
      for (size_t k; (k = next++) < todo.size();) {
        try {
          edit_part(parts[todo[k]], parser, edited[todo[k]]);
        } catch (...) {
          edited[todo[k]].failure = std::current_exception();
        }
      }
    };
    std::optional<std::thread> helper;
    if (todo.size() > 1 && std::thread::hardware_concurrency() > 1) helper.emplace(work, std::ref(parsers[1]));
    work(parsers[0]);
    if (helper) helper->join();
  }
  // (the first failing part in the text's order, whichever thread met it)
  for (const Edited& e : edited)
    if (e.failure) std::rethrow_exception(e.failure);
  std::vector<Replacement> cuts;
  cuts.reserve(edits.size());
  size_t located = 0;
  for (Edited& e : edited) {
    located += e.located;
    for (Replacement& r : e.cuts) cuts.push_back(std::move(r));
  }
  if (located != edits.size())
    fail_input(source,
               "cannot edit the plan: " + std::to_string(edits.size() - located) + " of its edits name no value in it");
  std::sort(cuts.begin(), cuts.end(), [](const Replacement& a, const Replacement& b) { return a.begin < b.begin; });
  EditedText out;
  out.inserted.reserve(cuts.size());
  for (Replacement& c : cuts) out.inserted.push_back(std::move(c.text));
  size_t from = 0;
  for (size_t i = 0; i < cuts.size(); ++i) {
    if (cuts[i].begin < from) fail_input(source, "cannot edit the plan: two edits overlap");
    out.pieces.push_back(text.substr(from, cuts[i].begin - from));
    out.pieces.push_back(out.inserted[i]);
    from = cuts[i].end;
  }
  out.pieces.push_back(text.substr(from));
  return out;
}

std::string apply_edits(std::string_view text, size_t readable, const std::vector<PlanEdit>& edits,
                        const std::string& source, const std::vector<TextSection>* sections) {
  const EditedText edited = edit_text(text, readable, edits, source, sections);
  std::string out;
  size_t size = 0;
  for (std::string_view piece : edited.pieces) size += piece.size();
  out.reserve(size);
  for (std::string_view piece : edited.pieces) out += piece;
  return out;
}

}  // namespace memplan::plan_doc
