#include "shadowed_names.h"

#include <set>

#include "proto_model.h"

namespace memplan::onnx_io {
namespace {

// Appended to a renamed value's name with a number: a unit separator, which no real model's names hold (a model whose
// names do is left as it is).
constexpr char kMark = '\x1f';

std::set<std::string> defined_in(const onnx::GraphProto& g) {
  std::set<std::string> names;
  for (const auto& in : g.input()) names.insert(in.name());
  for (const auto& t : g.initializer()) names.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& out : n.output())
      if (!out.empty()) names.insert(out);
  return names;
}

// Calls fn on every name in g (its declarations, its nodes' inputs and outputs, a name it may change), and in the
// subgraphs inside it that `enter` admits (they read g's values as outer values).
template <typename Fn, typename Enter>
void for_each_name(onnx::GraphProto& g, Fn&& fn, Enter&& enter) {
  for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
    for (auto& vi : *list) fn(*vi.mutable_name());
  for (auto& t : *g.mutable_initializer()) fn(*t.mutable_name());
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input()) fn(in);
    for (auto& out : *n.mutable_output()) fn(out);
    for_each_subgraph(n, [&](onnx::GraphProto& sub) {
      if (enter(sub)) for_each_name(sub, fn, enter);
    });
  }
}

template <typename Fn>
void for_each_name_everywhere(onnx::GraphProto& g, Fn&& fn) {
  for_each_name(g, fn, [](const onnx::GraphProto&) { return true; });
}

// Renames `from` to `to` in g and in the subgraphs that read it from g (not in one that defines `from` itself, nor
// below it).
void rename_value(onnx::GraphProto& g, const std::string& from, const std::string& to) {
  for_each_name(
      g,
      [&](std::string& name) {
        if (name == from) name = to;
      },
      [&](const onnx::GraphProto& sub) { return !defined_in(sub).count(from); });
}

// Whether a name in g's subgraphs (what they define and what they read) holds the mark already.
bool subgraphs_marked(onnx::GraphProto& g) {
  bool found = false;
  for (auto& n : *g.mutable_node())
    for_each_subgraph(n, [&](onnx::GraphProto& sub) {
      for_each_name_everywhere(sub, [&](std::string& name) { found = found || name.find(kMark) != std::string::npos; });
    });
  return found;
}

// Every name the subgraphs of g (and theirs) define.
void defined_in_subgraphs(onnx::GraphProto& g, std::set<std::string>& names) {
  for (auto& n : *g.mutable_node())
    for_each_subgraph(n, [&](onnx::GraphProto& sub) {
      const std::set<std::string> own = defined_in(sub);
      names.insert(own.begin(), own.end());
      defined_in_subgraphs(sub, names);
    });
}

using Scopes = std::vector<const std::set<std::string>*>;

bool in_scope(const Scopes& scopes, const std::string& name) {
  for (const auto* scope : scopes)
    if (scope->count(name)) return true;
  return false;
}

// Renames what each subgraph of g defines that an enclosing scope defines too, innermost scopes last.
void unique_in_subgraphs(onnx::GraphProto& g, Scopes& scopes, int& counter, bool& renamed) {
  for (auto& n : *g.mutable_node())
    for_each_subgraph(n, [&](onnx::GraphProto& sub) {
      std::set<std::string> own;
      for (const std::string& name : defined_in(sub)) {
        if (!in_scope(scopes, name)) {
          own.insert(name);
          continue;
        }
        const std::string unique = name + kMark + std::to_string(counter++);
        rename_value(sub, name, unique);
        own.insert(unique);
        renamed = true;
      }
      scopes.push_back(&own);
      unique_in_subgraphs(sub, scopes, counter, renamed);
      scopes.pop_back();
    });
}

}  // namespace

std::string original_name(const std::string& name) {
  const size_t mark = name.find(kMark);
  return mark == std::string::npos ? name : name.substr(0, mark);
}

std::string without_unique_marks(std::string text) {
  for (size_t mark; (mark = text.find(kMark)) != std::string::npos;) {
    size_t end = mark + 1;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    text.erase(mark, end - mark);
  }
  return text;
}

bool make_shadowed_names_unique(onnx::GraphProto& main) {
  // (a large main graph is never put in a table: only its names that some subgraph defines too)
  std::set<std::string> in_subgraphs;
  defined_in_subgraphs(main, in_subgraphs);
  if (in_subgraphs.empty()) return false;
  std::set<std::string> shadowed_main;
  auto note = [&](const std::string& name) {
    if (in_subgraphs.count(name)) shadowed_main.insert(name);
  };
  for (const auto& in : main.input()) note(in.name());
  for (const auto& t : main.initializer()) note(t.name());
  for (const auto& n : main.node())
    for (const auto& out : n.output()) note(out);
  if (subgraphs_marked(main)) return false;
  int counter = 0;
  bool renamed = false;
  Scopes scopes = {&shadowed_main};
  unique_in_subgraphs(main, scopes, counter, renamed);
  return renamed;
}

void restore_shadowed_names(onnx::GraphProto& main, std::map<std::string, std::string>& by_name) {
  for (auto& n : *main.mutable_node())
    for_each_subgraph(n, [](onnx::GraphProto& sub) {
      for_each_name_everywhere(sub, [](std::string& name) {
        if (name.find(kMark) != std::string::npos) name = original_name(name);
      });
    });
  std::map<std::string, std::string> restored;
  for (auto& [name, value] : by_name) restored.emplace(original_name(name), std::move(value));
  by_name = std::move(restored);
}

}  // namespace memplan::onnx_io
