// Fuzz target: small generated shape computations (the constant evaluator's and ONNX inference's input). The bytes
// drive a generator that builds a valid-looking model: a graph input with fixed and free dims, a few integer and
// float initializers with extreme values (INT64_MIN/MAX, empty tensors, raw data), and up to 16 nodes of the ops
// memplan evaluates at load, with attributes from extreme values too; then `memplan plan` loads, evaluates and
// plans it. Mutating the bytes mutates the program, so the search reaches deep evaluator states quickly.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

#include "support.h"

using namespace memplan::fuzz;

namespace {

class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool empty() const { return pos_ >= size_; }
  size_t pick(size_t n) { return n == 0 ? 0 : byte() % n; }
  bool coin() { return byte() & 1; }
  int64_t integer() {
    static const int64_t special[] = {0,
                                      1,
                                      -1,
                                      2,
                                      3,
                                      4,
                                      -2,
                                      7,
                                      16,
                                      std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min(),
                                      std::numeric_limits<int32_t>::max(),
                                      std::numeric_limits<int32_t>::min(),
                                      int64_t{1} << 31,
                                      int64_t{1} << 40,
                                      1000000000,
                                      -1000000000};
    const uint8_t b = byte();
    if (b < 160) return special[b % std::size(special)];
    return static_cast<int64_t>(byte()) - 128;
  }
  float real() {
    static const float special[] = {0.f,
                                    1.f,
                                    -1.f,
                                    0.5f,
                                    2.5f,
                                    3.f,
                                    1e30f,
                                    -1e30f,
                                    std::numeric_limits<float>::infinity(),
                                    -std::numeric_limits<float>::infinity(),
                                    std::numeric_limits<float>::quiet_NaN(),
                                    1e-30f};
    return special[pick(std::size(special))];
  }

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
};

struct OpSpec {
  const char* op;
  int min_inputs, max_inputs, outputs;
  std::vector<const char*> int_attrs, ints_attrs;
};

const std::vector<OpSpec>& ops() {
  static const std::vector<OpSpec> table = {
      {"Shape", 1, 1, 1, {"start", "end"}, {}},
      {"Size", 1, 1, 1, {}, {}},
      {"Range", 3, 3, 1, {}, {}},
      {"Expand", 2, 2, 1, {}, {}},
      {"ConstantOfShape", 1, 1, 1, {}, {}},
      {"Concat", 1, 4, 1, {"axis"}, {}},
      {"Slice", 3, 5, 1, {}, {}},
      {"Reshape", 2, 2, 1, {"allowzero"}, {}},
      {"Gather", 2, 2, 1, {"axis"}, {}},
      {"GatherElements", 2, 2, 1, {"axis"}, {}},
      {"GatherND", 2, 2, 1, {"batch_dims"}, {}},
      {"Unsqueeze", 1, 2, 1, {}, {"axes"}},
      {"Squeeze", 1, 2, 1, {}, {"axes"}},
      {"Add", 2, 2, 1, {}, {}},
      {"Sub", 2, 2, 1, {}, {}},
      {"Mul", 2, 2, 1, {}, {}},
      {"Div", 2, 2, 1, {}, {}},
      {"Mod", 2, 2, 1, {"fmod"}, {}},
      {"Pow", 2, 2, 1, {}, {}},
      {"Max", 1, 3, 1, {}, {}},
      {"Min", 1, 3, 1, {}, {}},
      {"Sum", 1, 3, 1, {}, {}},
      {"Mean", 1, 3, 1, {}, {}},
      {"Neg", 1, 1, 1, {}, {}},
      {"Abs", 1, 1, 1, {}, {}},
      {"Sign", 1, 1, 1, {}, {}},
      {"Reciprocal", 1, 1, 1, {}, {}},
      {"Ceil", 1, 1, 1, {}, {}},
      {"Floor", 1, 1, 1, {}, {}},
      {"Round", 1, 1, 1, {}, {}},
      {"Sqrt", 1, 1, 1, {}, {}},
      {"Exp", 1, 1, 1, {}, {}},
      {"Log", 1, 1, 1, {}, {}},
      {"Clip", 1, 3, 1, {}, {}},
      {"Cast", 1, 1, 1, {"to"}, {}},
      {"Identity", 1, 1, 1, {}, {}},
      {"Equal", 2, 2, 1, {}, {}},
      {"Less", 2, 2, 1, {}, {}},
      {"Greater", 2, 2, 1, {}, {}},
      {"Not", 1, 1, 1, {}, {}},
      {"And", 2, 2, 1, {}, {}},
      {"Where", 3, 3, 1, {}, {}},
      {"ReduceProd", 1, 1, 1, {"keepdims"}, {"axes"}},
      {"ReduceSum", 1, 2, 1, {"keepdims", "noop_with_empty_axes"}, {}},
      {"ReduceMax", 1, 1, 1, {"keepdims"}, {"axes"}},
      {"ReduceMin", 1, 1, 1, {"keepdims"}, {"axes"}},
      {"ReduceMean", 1, 1, 1, {"keepdims"}, {"axes"}},
      {"ArgMax", 1, 1, 1, {"axis", "keepdims", "select_last_index"}, {}},
      {"CumSum", 2, 2, 1, {"exclusive", "reverse"}, {}},
      {"Tile", 2, 2, 1, {}, {}},
      {"Split", 1, 2, 2, {"axis"}, {"split"}},
      {"Transpose", 1, 1, 1, {}, {"perm"}},
      {"Flatten", 1, 1, 1, {"axis"}, {}},
      {"Pad", 2, 3, 1, {}, {}},
      {"TopK", 2, 2, 2, {"axis", "largest", "sorted"}, {}},
      {"OneHot", 3, 3, 1, {"axis"}, {}},
      {"Trilu", 1, 2, 1, {"upper"}, {}},
      {"NonZero", 1, 1, 1, {}, {}},
      {"ScatterND", 3, 3, 1, {}, {}},
      {"ScatterElements", 3, 3, 1, {"axis"}, {}},
      {"Einsum", 1, 2, 1, {}, {}},
      {"BitShift", 2, 2, 1, {}, {}},
      {"MatMul", 2, 2, 1, {}, {}},
      {"Relu", 1, 1, 1, {}, {}},
      {"Resize", 1, 4, 1, {}, {}},
      {"If", 1, 1, 1, {}, {}},
      {"Loop", 2, 3, 1, {}, {}},
      {"Scan", 1, 2, 1, {"num_scan_inputs"}, {}},
  };
  return table;
}

void add_tensor(onnx::TensorProto& t, Choices& c, const std::string& name) {
  t.set_name(name);
  const size_t rank = c.pick(3);
  size_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = c.pick(5);
    t.add_dims(d);
    count *= static_cast<size_t>(d);
  }
  const bool floating = c.pick(4) == 0;
  t.set_data_type(floating ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64);
  const bool raw = c.pick(4) == 0;
  std::string bytes;
  for (size_t i = 0; i < count; ++i) {
    if (floating) {
      float v = c.real();
      if (raw)
        bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
      else
        t.add_float_data(v);
    } else {
      int64_t v = c.integer();
      if (raw)
        bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
      else
        t.add_int64_data(v);
    }
  }
  if (raw) t.set_raw_data(bytes);
  if (c.pick(16) == 0) t.add_int64_data(c.integer());  // a count that disagrees with the dims
}

void add_body(onnx::AttributeProto& attr, Choices& c, const char* name) {
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& g = *attr.mutable_g();
  g.set_name(std::string(name) + "_body");
  const size_t inputs = c.pick(4);
  for (size_t i = 0; i < inputs; ++i) {
    auto* in = g.add_input();
    in->set_name(std::string(name) + "_in" + std::to_string(i));
    if (c.coin()) in->mutable_type()->mutable_tensor_type()->set_elem_type(c.coin() ? 7 : 9);
  }
  const size_t outputs = c.pick(4);
  for (size_t i = 0; i < outputs; ++i) {
    auto* node = g.add_node();
    node->set_op_type("Identity");
    node->add_input(inputs ? std::string(name) + "_in" + std::to_string(c.pick(inputs)) : "outer_x");
    node->add_output(std::string(name) + "_out" + std::to_string(i));
    g.add_output()->set_name(node->output(0));
  }
}

std::string generate(Choices& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* opset = m.add_opset_import();
  static const int versions[] = {13, 17, 11, 9};
  opset->set_version(versions[c.pick(4)]);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("fuzz");
  std::vector<std::string> values;
  auto* x = g.add_input();
  x->set_name("outer_x");
  auto* xt = x->mutable_type()->mutable_tensor_type();
  xt->set_elem_type(onnx::TensorProto::FLOAT);
  const size_t rank = c.pick(4);
  for (size_t i = 0; i < rank; ++i) {
    auto* d = xt->mutable_shape()->add_dim();
    if (c.pick(4) == 0)
      d->set_dim_param("N");
    else
      d->set_dim_value(c.pick(6));
  }
  values.push_back("outer_x");
  const size_t initializers = 1 + c.pick(4);
  for (size_t i = 0; i < initializers; ++i) {
    const std::string name = "k" + std::to_string(i);
    add_tensor(*g.add_initializer(), c, name);
    values.push_back(name);
  }
  const size_t nodes = 1 + c.pick(16);
  for (size_t n = 0; n < nodes && !c.empty(); ++n) {
    const OpSpec& spec = ops()[c.pick(ops().size())];
    auto* node = g.add_node();
    node->set_op_type(spec.op);
    node->set_name("n" + std::to_string(n));
    const int inputs = spec.min_inputs + static_cast<int>(c.pick(spec.max_inputs - spec.min_inputs + 1));
    for (int i = 0; i < inputs; ++i) node->add_input(c.pick(10) == 0 ? "" : values[c.pick(values.size())]);
    if (c.pick(8) == 0) {  // a Constant feeding it instead
      auto* k = g.add_node();
      k->set_op_type("Constant");
      k->add_output("c" + std::to_string(n));
      auto* a = k->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      add_tensor(*a->mutable_t(), c, "");
      g.mutable_node()->SwapElements(g.node_size() - 1, g.node_size() - 2);
      node = g.mutable_node(g.node_size() - 1);
      if (node->input_size()) node->set_input(0, "c" + std::to_string(n));
    }
    for (const char* name : spec.int_attrs)
      if (c.coin()) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(std::string(name) == "to" ? static_cast<int64_t>(c.pick(17)) : c.integer());
      }
    for (const char* name : spec.ints_attrs)
      if (c.coin()) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        const size_t len = c.pick(4);
        for (size_t i = 0; i < len; ++i) a->add_ints(c.integer());
      }
    const std::string op = spec.op;
    if (op == "ConstantOfShape" && c.coin()) {
      auto* a = node->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      add_tensor(*a->mutable_t(), c, "");
    }
    if (op == "Einsum") {
      static const char* const equations[] = {"ij,jk->ik", "i,i", "ii->i", "...i->...", "ij->ji", "", "i->", "a,b->ab"};
      auto* a = node->add_attribute();
      a->set_name("equation");
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(equations[c.pick(std::size(equations))]);
    }
    if (op == "If" && c.pick(4)) {
      add_body(*node->add_attribute(), c, "then_branch");
      add_body(*node->add_attribute(), c, "else_branch");
    }
    if ((op == "Loop" || op == "Scan") && c.pick(4)) add_body(*node->add_attribute(), c, "body");
    for (int o = 0; o < spec.outputs; ++o) {
      const std::string name = "v" + std::to_string(n) + "_" + std::to_string(o);
      node->add_output(name);
      values.push_back(name);
    }
  }
  // The last values are the graph's outputs; sometimes one sized from a computed shape too.
  const size_t outputs = 1 + c.pick(3);
  for (size_t i = 0; i < outputs && i < values.size(); ++i) g.add_output()->set_name(values[values.size() - 1 - i]);
  return m.SerializeAsString();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Choices choices(data, size);
  const std::string model = write_scratch("shapes.onnx", generate(choices));
  run_cli({"plan", model, "-o", scratch_dir() + "/plan.json", "--time-budget", "0", "--allow-unknown-sizes"});
  return 0;
}
