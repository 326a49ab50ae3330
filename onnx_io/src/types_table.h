// Internal to onnx_io/: the tables an inference child sends its parent instead of protobuf messages. Parent and child
// are one program, so the tables are in native byte order; the reader checks every length against what is left.
//
// A million value_info entries parsed back into protobuf objects took ~250 MB of fresh memory and a quarter of a
// second in the parent, on the path everything waits on; the types table is the reply itself, read in place.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace memplan::onnx_io {

namespace table_bytes {

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

inline void put_text(std::string& out, const std::string& s) {
  put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out += s;
}

// Reads a table with every length checked against what is left ("shape inference returned a truncated table").
class Reader {
 public:
  Reader(const char* data, size_t size) : begin_(data), at_(data), end_(data + size) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string_view text() {
    const auto n = get<uint32_t>();
    need(n);
    const std::string_view s(at_, n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ == end_; }
  size_t offset() const { return static_cast<size_t>(at_ - begin_); }
  void seek(size_t offset) {
    if (offset > static_cast<size_t>(end_ - begin_)) throw std::runtime_error("a table read out of its bounds");
    at_ = begin_ + offset;
  }

 private:
  void need(size_t n) const {
    if (static_cast<size_t>(end_ - at_) < n) throw std::runtime_error("shape inference returned a truncated table");
  }
  const char* begin_;
  const char* at_;
  const char* end_;
};

// A tensor's shape: u8 has_shape, u32 rank, then per dim u8 kind (kAnonymousDim; kDimValue, then i64; kDimParam,
// then u32 length and the name). None (nullptr) is written as no shape, rank 0.
enum : uint8_t { kAnonymousDim = 0, kDimValue = 1, kDimParam = 2 };
void put_shape(std::string& out, const onnx::TensorShapeProto* shape);
// Reads what put_shape wrote: whether there is a shape, its rank (before the dims: `rank(has_shape, n)`), then
// `dim(kind, value, param)` for each dim.
template <typename Rank, typename DimFn>
void get_shape(Reader& in, Rank&& rank, DimFn&& dim) {
  const bool has_shape = in.get<uint8_t>() != 0;
  const auto n = in.get<uint32_t>();
  rank(has_shape, n);
  for (uint32_t k = 0; k < n; ++k) {
    const auto kind = in.get<uint8_t>();
    if (kind == kDimValue)
      dim(kind, in.get<int64_t>(), std::string_view());
    else if (kind == kDimParam)
      dim(kind, int64_t{-1}, in.text());
    else if (kind == kAnonymousDim)
      dim(kind, int64_t{-1}, std::string_view());
    else
      throw std::runtime_error("shape inference returned a table with an unknown kind of dimension");
  }
}

}  // namespace table_bytes

// A graph's value_info entries and outputs as inference left them, each entry's name and of its type what the graph
// view reads (graph_builder.cc, set_type): which kind of type, the element type, and a tensor's shape, dim by dim.
// Layout: u64 value_info count, u64 output count, then per entry: u32 name length, name, u8 TypeProto::value_case,
// i32 element type, and a tensor's or sparse tensor's shape (put_shape).
std::string types_table_part(const onnx::GraphProto& graph);

// A types table read back (every entry checked once, when made).
class TypesTable {
 public:
  explicit TypesTable(std::string bytes);
  uint64_t value_info_count() const { return value_info_; }
  uint64_t output_count() const { return outputs_; }
  // Calls fn(name, entry) for each entry in order: the value_info entries, then the outputs.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    table_bytes::Reader in(bytes_.data(), bytes_.size());
    in.seek(kHeader);
    while (!in.done()) {
      const size_t entry = in.offset();
      const std::string_view name = in.text();
      skip_type(in);
      fn(name, entry);
    }
  }
  // Reads the entry at `entry` (an offset for_each gave): head(value_case, elem_type, has_shape, rank), then
  // dim(kind, value, param) for each dim (table_bytes::get_shape).
  template <typename Head, typename DimFn>
  void read(size_t entry, Head&& head, DimFn&& dim) const {
    table_bytes::Reader in(bytes_.data(), bytes_.size());
    in.seek(entry);
    (void)in.text();
    const auto value_case = in.get<uint8_t>();
    const auto elem_type = in.get<int32_t>();
    table_bytes::get_shape(
        in, [&](bool has_shape, uint32_t rank) { head(value_case, elem_type, has_shape, rank); }, dim);
  }
  // The type of the entry at `entry`, written into `type` (cleared first).
  void type(size_t entry, onnx::TypeProto& type) const;
  // The entries put back into `graph` as the protobuf reply would have: its value_info and outputs replaced.
  void put_back(onnx::GraphProto& graph) const;

 private:
  static constexpr size_t kHeader = 2 * sizeof(uint64_t);
  static void skip_type(table_bytes::Reader& in);
  std::string bytes_;
  uint64_t value_info_ = 0, outputs_ = 0;
};

}  // namespace memplan::onnx_io
