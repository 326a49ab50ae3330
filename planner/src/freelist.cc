#include "freelist.h"

#include <algorithm>
#include <charconv>

#include "memplan/dtype.h"

namespace memplan::planner {

void Freelist::clear(size_t streams) {
  streams_ = streams;
  buckets_.clear();
  std::fill(live_seq_.begin(), live_seq_.end(), 0);
  for (auto& b : bucket_of_) b.clear();
}

std::string Freelist::shape_key(const SeenValue& seen, partition::Device location) {
  const Value& v = seen.value;
  const auto bits = dtype_bits(v.dtype);
  if (!v.is_tensor() || v.dtype == kDTypeString || !bits || !seen.has_shape) return {};
  // Built in one string (asked for every value the walk frees or allocates): "s<device>/<bits>/<dim>,<dim>,...".
  std::string key;
  key.reserve(32);
  auto number = [&key](uint64_t n) {
    char digits[24];
    key.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
  };
  key += 's';
  key += partition::device_name(location);
  key += '/';
  number(static_cast<uint64_t>(*bits));
  key += '/';
  for (const Dim& d : seen.dims) {
    if (d.known()) {
      number(static_cast<uint64_t>(d.value));
      key += ',';
    } else if (!d.param.empty()) {
      key += '?';  // length first: any name is one key
      number(d.param.size());
      key += ':';
      key += d.param;
      key += ',';
    } else {
      return {};  // an anonymous dim equals no other
    }
  }
  return key;
}

std::string Freelist::bytes_key(const Value& v, partition::Device location) {
  if (!v.is_tensor() || v.dtype == kDTypeString || !v.bytes || *v.bytes == 0) return {};
  return "b" + partition::device_name(location) + "/" + std::to_string(*v.bytes);
}

Freelist::Bucket* Freelist::find(const std::string& key) {
  if (key.empty()) return nullptr;
  auto it = buckets_.find(key);
  return it == buckets_.end() ? nullptr : &it->second;
}

void Freelist::push(ValueId v, const SeenValue& val, partition::Device location) {
  if (live_seq_[v]) kill(v);
  const uint64_t seq = next_seq_++;
  for (const std::string& key :
       {shape_key(val, location), by_bytes_ ? bytes_key(val.value, location) : std::string()}) {
    if (key.empty()) continue;
    Bucket& b = buckets_[key];
    if (streams_ > 1) {
      if (b.streams.empty()) {
        b.streams.resize(streams_);
        for (StreamView& view : b.streams) view.parked.resize(streams_);
      }
      for (StreamView& view : b.streams) view.ready.push_back({seq, v});
    } else {
      b.entries.push_back({seq, v});
    }
    bucket_of_[v].push_back(&b);
  }
  if (!bucket_of_[v].empty()) live_seq_[v] = seq;
}

void Freelist::kill(ValueId v) {
  live_seq_[v] = 0;
  for (Bucket* b : bucket_of_[v])
    if (++b->dead * 2 > b->entries.size()) {
      std::erase_if(b->entries, [&](const Entry& e) { return !alive(e); });
      b->dead = 0;
    }
  bucket_of_[v].clear();
}

}  // namespace memplan::planner
