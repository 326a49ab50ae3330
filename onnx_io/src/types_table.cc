#include "types_table.h"

namespace memplan::onnx_io {

void table_bytes::put_shape(std::string& out, const onnx::TensorShapeProto* shape) {
  put<uint8_t>(out, shape != nullptr);
  put<uint32_t>(out, shape ? static_cast<uint32_t>(shape->dim_size()) : 0);
  if (!shape) return;
  for (const auto& d : shape->dim()) {
    if (d.has_dim_value()) {
      put<uint8_t>(out, kDimValue);
      put<int64_t>(out, d.dim_value());
    } else if (d.has_dim_param()) {
      put<uint8_t>(out, kDimParam);
      put_text(out, d.dim_param());
    } else {
      put<uint8_t>(out, kAnonymousDim);
    }
  }
}

namespace {

void put_entry(std::string& out, const onnx::ValueInfoProto& vi) {
  table_bytes::put_text(out, vi.name());
  const onnx::TypeProto& t = vi.type();
  table_bytes::put<uint8_t>(out, static_cast<uint8_t>(t.value_case()));
  const bool tensor = t.has_tensor_type(), sparse = t.has_sparse_tensor_type();
  table_bytes::put<int32_t>(out, tensor   ? t.tensor_type().elem_type()
                                 : sparse ? t.sparse_tensor_type().elem_type()
                                          : 0);
  table_bytes::put_shape(out, tensor && t.tensor_type().has_shape()          ? &t.tensor_type().shape()
                              : sparse && t.sparse_tensor_type().has_shape() ? &t.sparse_tensor_type().shape()
                                                                             : nullptr);
}

}  // namespace

std::string types_table_part(const onnx::GraphProto& graph) {
  std::string out;
  out.reserve(static_cast<size_t>(graph.value_info_size() + graph.output_size()) * 40);
  table_bytes::put<uint64_t>(out, static_cast<uint64_t>(graph.value_info_size()));
  table_bytes::put<uint64_t>(out, static_cast<uint64_t>(graph.output_size()));
  for (const auto& vi : graph.value_info()) put_entry(out, vi);
  for (const auto& vi : graph.output()) put_entry(out, vi);
  return out;
}

void TypesTable::skip_type(table_bytes::Reader& in) {
  (void)in.get<uint8_t>();
  (void)in.get<int32_t>();
  table_bytes::get_shape(
      in, [](bool, uint32_t) {}, [](uint8_t, int64_t, std::string_view) {});
}

TypesTable::TypesTable(std::string bytes) : bytes_(std::move(bytes)) {
  table_bytes::Reader in(bytes_.data(), bytes_.size());
  value_info_ = in.get<uint64_t>();
  outputs_ = in.get<uint64_t>();
  uint64_t entries = 0;
  for_each([&](std::string_view, size_t) { ++entries; });
  if (entries != value_info_ + outputs_) throw std::runtime_error("shape inference returned a table of another size");
}

void TypesTable::type(size_t entry, onnx::TypeProto& type) const {
  type.Clear();
  onnx::TensorShapeProto* shape = nullptr;
  auto head = [&](uint8_t value_case, int32_t elem_type, bool has_shape, uint32_t) {
    switch (value_case) {
      case onnx::TypeProto::kTensorType:
        type.mutable_tensor_type()->set_elem_type(elem_type);
        if (has_shape) shape = type.mutable_tensor_type()->mutable_shape();
        break;
      case onnx::TypeProto::kSparseTensorType:
        type.mutable_sparse_tensor_type()->set_elem_type(elem_type);
        if (has_shape) shape = type.mutable_sparse_tensor_type()->mutable_shape();
        break;
      case onnx::TypeProto::kSequenceType:
        type.mutable_sequence_type();
        break;
      case onnx::TypeProto::kMapType:
        type.mutable_map_type();
        break;
      case onnx::TypeProto::kOptionalType:
        type.mutable_optional_type();
        break;
      case onnx::TypeProto::kOpaqueType:
        type.mutable_opaque_type();
        break;
      default:  // (none, or a kind the graph view reads nothing of)
        break;
    }
  };
  read(entry, head, [&](uint8_t kind, int64_t value, std::string_view param) {
    if (!shape) return;
    auto* dim = shape->add_dim();
    if (kind == table_bytes::kDimValue) dim->set_dim_value(value);
    if (kind == table_bytes::kDimParam) dim->set_dim_param(std::string(param));
  });
}

void TypesTable::put_back(onnx::GraphProto& graph) const {
  graph.clear_value_info();
  graph.clear_output();
  uint64_t k = 0;
  for_each([&](std::string_view name, size_t entry) {
    onnx::ValueInfoProto* vi = k++ < value_info_ ? graph.add_value_info() : graph.add_output();
    vi->set_name(std::string(name));
    type(entry, *vi->mutable_type());
  });
}

}  // namespace memplan::onnx_io
