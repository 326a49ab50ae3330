#include "model_reader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/file_kind.h"
#include "memplan/onnx_io/load.h"

namespace memplan::onnx_io {
namespace {

namespace pbio = google::protobuf::io;

std::atomic<uint64_t> payload_kept{uint64_t{8} << 16};

// The ONNX messages on the way to a tensor, and the fields that lead from one to the next (onnx.proto3).
enum class Msg { kOther, kModel, kTraining, kFunction, kGraph, kNode, kAttribute, kSparse, kTensor };

Msg child(Msg parent, uint32_t field) {
  switch (parent) {
    case Msg::kModel:  // graph, training_info, functions
      return field == 7 ? Msg::kGraph : field == 20 ? Msg::kTraining : field == 25 ? Msg::kFunction : Msg::kOther;
    case Msg::kTraining:  // initialization, algorithm
      return field == 1 || field == 2 ? Msg::kGraph : Msg::kOther;
    case Msg::kFunction:  // node
      return field == 7 ? Msg::kNode : Msg::kOther;
    case Msg::kGraph:  // node, initializer, sparse_initializer
      return field == 1 ? Msg::kNode : field == 5 ? Msg::kTensor : field == 15 ? Msg::kSparse : Msg::kOther;
    case Msg::kNode:  // attribute
      return field == 5 ? Msg::kAttribute : Msg::kOther;
    case Msg::kAttribute:  // t, g, tensors, graphs, sparse_tensor, sparse_tensors
      return field == 5 || field == 10    ? Msg::kTensor
             : field == 6 || field == 11  ? Msg::kGraph
             : field == 22 || field == 23 ? Msg::kSparse
                                          : Msg::kOther;
    case Msg::kSparse:  // values, indices
      return field == 1 || field == 2 ? Msg::kTensor : Msg::kOther;
    default:
      return Msg::kOther;
  }
}

// TensorProto's data fields: float_data, int32_data, string_data, int64_data, raw_data, double_data, uint64_data.
bool payload_field(uint32_t field) {
  return (field >= 4 && field <= 7) || field == 9 || field == 10 || field == 11;
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

constexpr size_t kMaxVarint32 = 5;
// Fields up to this long are read straight into the copy; longer ones only once the file has proved to hold them.
constexpr uint32_t kReadInPlace = 1 << 20;
// protobuf's default limit on nested messages, which libonnx's parse and ONNX Runtime's loader keep too.
constexpr int kMaxDepth = 100;

struct Filter {
  pbio::CodedInputStream& in;
  ModelBytes& result;
  bool too_deep = false;  // the copy stopped at protobuf's nesting limit

  // Copies the fields of one message from `in` (up to its limit, or the end) to `out`; false where the wire format
  // is broken.
  bool copy(Msg kind, std::string& out, int depth) {
    if (depth > kMaxDepth) {  // protobuf's own nesting limit
      too_deep = true;
      return false;
    }
    bool left_out = false;
    for (;;) {
      const uint32_t tag = in.ReadTag();
      if (tag == 0) {
        if (!in.ConsumedEntireMessage()) return false;
        break;
      }
      const uint32_t field = tag >> 3;
      const size_t key_at = out.size();
      put_varint(out, tag);
      switch (tag & 7) {
        case 0: {
          uint64_t v = 0;
          if (!in.ReadVarint64(&v)) return false;
          put_varint(out, v);
          break;
        }
        case 1: {
          uint64_t v = 0;
          if (!in.ReadLittleEndian64(&v)) return false;
          out.append(reinterpret_cast<const char*>(&v), 8);
          break;
        }
        case 5: {
          uint32_t v = 0;
          if (!in.ReadLittleEndian32(&v)) return false;
          out.append(reinterpret_cast<const char*>(&v), 4);
          break;
        }
        case 2: {
          uint32_t length = 0;
          if (!in.ReadVarint32(&length) || length > INT_MAX) return false;
          const Msg sub = child(kind, field);
          if (sub != Msg::kOther) {
            // Copied in place behind room for the longest length, then moved down to the length's own size: one
            // buffer for the whole model (a string per message, the graph's a copy of the model, faulted in twice).
            const size_t length_at = out.size();
            out.append(kMaxVarint32, '\0');
            const auto limit = in.PushLimit(static_cast<int>(length));
            if (!copy(sub, out, depth + 1) || in.BytesUntilLimit() != 0) return false;
            in.PopLimit(limit);
            std::string prefix;
            put_varint(prefix, out.size() - length_at - kMaxVarint32);
            out.replace(length_at, kMaxVarint32, prefix);
          } else if (kind == Msg::kTensor && payload_field(field) && length > payload_kept.load()) {
            out.resize(key_at);  // the field goes, key and all
            if (!in.Skip(static_cast<int>(length))) return false;
            left_out = true;
            result.bytes_left_out += length;
          } else {
            put_varint(out, length);
            if (length <= kReadInPlace) {  // read straight into place: no string per field
              const size_t at = out.size();
              out.resize(at + length);
              if (!in.ReadRaw(out.data() + at, static_cast<int>(length))) return false;
            } else {  // (a length the file may not have: protobuf reads it in steps, allocating as the bytes come)
              std::string bytes;
              if (!in.ReadString(&bytes, static_cast<int>(length))) return false;
              out += bytes;
            }
          }
          break;
        }
        default:  // groups (3, 4) are not in ONNX's messages; 6 and 7 are not wire types
          return false;
      }
    }
    if (left_out) {
      // Marked as external data, which memplan never reads (data_location EXTERNAL, external_data location).
      put_varint(out, 14 << 3 | 0);
      put_varint(out, 1);
      static const std::string kLocation = "memplan: inline data not read";
      std::string entry;
      put_varint(entry, 1 << 3 | 2);
      put_varint(entry, 8);
      entry += "location";
      put_varint(entry, 2 << 3 | 2);
      put_varint(entry, kLocation.size());
      entry += kLocation;
      put_varint(out, 13 << 3 | 2);
      put_varint(out, entry.size());
      out += entry;
      ++result.tensors_left_out;
    }
    return true;
  }
};

// The file as a stream for protobuf: skipping seeks where the file is regular, so skipped bytes are never read.
class FileStream : public pbio::CopyingInputStream {
 public:
  explicit FileStream(const InputFile& file) : file_(file) {}
  int Read(void* buffer, int size) override {
    for (;;) {
      const ssize_t n = ::read(file_.fd(), buffer, static_cast<size_t>(size));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) error_ = errno;
      if (n > 0) consumed_ += static_cast<uint64_t>(n);
      if (consumed_ > max_input_bytes()) return -1;  // a pipe can be longer than any file read_file() accepts
      return static_cast<int>(n);
    }
  }
  int Skip(int count) override {
    if (!file_.regular()) return CopyingInputStream::Skip(count);
    const off_t at = ::lseek(file_.fd(), 0, SEEK_CUR);
    if (at < 0) return CopyingInputStream::Skip(count);
    const uint64_t left = file_.size() > static_cast<uint64_t>(at) ? file_.size() - static_cast<uint64_t>(at) : 0;
    const int n = static_cast<int>(std::min<uint64_t>(left, static_cast<uint64_t>(count)));
    if (::lseek(file_.fd(), n, SEEK_CUR) < 0) return CopyingInputStream::Skip(count);
    return n;
  }
  int error() const { return error_; }
  bool over_cap() const { return consumed_ > max_input_bytes(); }

 private:
  const InputFile& file_;
  int error_ = 0;
  uint64_t consumed_ = 0;
};

[[noreturn]] void fail_parse(const std::string& path, const std::string& head, bool too_deep) {
  expect_file_kind(head, path, FileKind::kOnnxModel);  // a plan, a CSV, an empty file: said as such
  if (too_deep) fail_too_deep(path);
  fail_input(path,
             "not a valid ONNX model: protobuf parsing failed (the file is truncated, corrupt, or not an .onnx file)");
}

bool filter(pbio::ZeroCopyInputStream& stream, ModelBytes& result, bool& too_deep) {
  pbio::CodedInputStream in(&stream);
  in.SetTotalBytesLimit(INT_MAX);
  Filter f{in, result};
  const bool ok = f.copy(Msg::kModel, result.bytes, 0);
  too_deep = f.too_deep;
  return ok;
}

}  // namespace

bool nests_too_deep(const std::string& bytes) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  pbio::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  in.SetRecursionLimit(2 * kMaxDepth);  // (a few levels more: a model nesting beyond that is refused as broken)
  onnx::ModelProto model;
  return model.ParseFromCodedStream(&in);
}

void fail_too_deep(const std::string& path) {
  fail_input(path, "its protobuf messages nest deeper than " + std::to_string(kMaxDepth) +
                       " levels, protobuf's limit, which ONNX Runtime's loader keeps too (each If/Loop/Scan body "
                       "inside another adds 3, a typed value in a body 4 more: about 32 bodies nested in one "
                       "another); ONNX Runtime cannot load it either: flatten the nesting");
}

uint64_t largest_payload_kept() {
  return payload_kept.load();
}

void set_largest_payload_kept(uint64_t bytes) {
  payload_kept.store(bytes);
}

ModelBytes strip_weights(const std::string& bytes, const std::string& path) {
  if (bytes.size() > INT_MAX) fail_input(path, "is larger than 2 GiB, more than one protobuf message can hold");
  pbio::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  ModelBytes result;
  bool too_deep = false;
  if (!filter(stream, result, too_deep)) fail_parse(path, bytes.substr(0, 4096), too_deep);
  return result;
}

ModelBytes read_model_without_weights(const std::string& path) {
  if (path == "-") return strip_weights(read_file(path), path);
  const std::string head = read_file_head(path, 4096);
  InputFile file(path);
  if (file.regular() && file.size() > INT_MAX)
    fail_input(path, "is larger than 2 GiB, more than one protobuf message can hold (keep weights in external data)");
  FileStream source(file);
  pbio::CopyingInputStreamAdaptor stream(&source, 1 << 16);
  ModelBytes result;
  // What is kept is at most the file (the marker of a payload left out is smaller than the payload): one buffer,
  // never regrown. (Up to 1 GiB: a model of weights keeps a small part of itself; beyond that it grows as usual.)
  if (file.regular()) result.bytes.reserve(std::min<uint64_t>(file.size(), 1ULL << 30));
  bool too_deep = false;
  const bool ok = filter(stream, result, too_deep);
  if (source.error()) fail_input(path, std::string("read error: ") + std::strerror(source.error()));
  if (source.over_cap())
    fail_input(path, "is larger than " + std::to_string(max_input_bytes()) +
                         " bytes, the most memplan reads from one file (set MEMPLAN_MAX_INPUT_BYTES to raise it)");
  if (!ok) fail_parse(path, head, too_deep);
  return result;
}

}  // namespace memplan::onnx_io
