// The compiled half of the Python module: memplan's library API (memplan/memplan.h) with Python types. The
// package (memplan/__init__.py) wraps it in plain Python data.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "memplan/memplan.h"

namespace py = pybind11;

namespace {

memplan::ShapeSettings shapes_from(const std::map<std::string, int64_t>& dims,
                                   const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                   const std::map<std::string, int64_t>& trip_counts) {
  return {dims, input_shapes, trip_counts};
}

py::dict device_dict(const memplan::DeviceSummary& d) {
  py::dict out;
  out["device"] = d.device;
  out["total"] = d.total;
  out["activations"] = d.activations;
  out["outputs"] = d.outputs;
  out["weights"] = d.weights;
  out["inputs"] = d.inputs;
  out["complete"] = d.complete;
  return out;
}

py::dict arena_dict(const memplan::ArenaSummary& a) {
  py::dict out;
  out["name"] = a.name;
  out["device"] = a.device;
  out["purpose"] = a.purpose;
  out["bytes"] = a.bytes;
  out["lower_bound"] = a.lower_bound;
  out["algorithm"] = a.algorithm;
  out["optimal"] = a.optimal;
  out["buffers"] = a.buffers;
  return out;
}

}  // namespace

PYBIND11_MODULE(_memplan, m) {
  m.doc() = "memplan's library API (use the memplan package, which wraps it)";
  // memplan.Error: the command line's message, and exit_code as the command line would exit.
  static py::exception<memplan::Error> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const memplan::Error& e) {
      py::object instance = py::reinterpret_borrow<py::object>(error.ptr())(e.what());
      instance.attr("exit_code") = static_cast<int>(e.code());
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });

  m.def("version", &memplan::version);

  m.def(
      "plan",
      [](const std::string& model, const std::map<std::string, int64_t>& dims,
         const std::map<std::string, std::vector<int64_t>>& input_shapes,
         const std::map<std::string, int64_t>& trip_counts, const std::string& device, int streams,
         const std::string& order, const std::string& partition, const std::string& placement,
         const std::string& op_properties, const std::string& like, const std::string& reuse,
         const std::string& arena_algorithm, double time_budget, uint64_t align, bool pack_outputs,
         bool allow_unknown_sizes) {
        memplan::PlanSettings s;
        s.shapes = shapes_from(dims, input_shapes, trip_counts);
        s.device = device;
        s.streams_per_device = streams;
        s.order = order;
        s.partition_config = partition;
        s.placement = placement;
        s.op_properties = op_properties;
        s.like = like;
        s.reuse = reuse;
        s.arena_algorithm = arena_algorithm;
        s.time_budget_s = time_budget;
        s.alignment = align;
        s.pack_outputs = pack_outputs;
        s.allow_unknown_sizes = allow_unknown_sizes;
        memplan::PlanResult r;
        {
          py::gil_scoped_release unlocked;
          r = memplan::make_plan(model, s);
        }
        py::dict out;
        out["json"] = r.json;
        out["complete"] = r.complete;
        out["nodes"] = r.nodes;
        out["values"] = r.values;
        out["streams"] = r.streams;
        py::list devices, arenas;
        for (const auto& d : r.devices) devices.append(device_dict(d));
        for (const auto& a : r.arenas) arenas.append(arena_dict(a));
        out["devices"] = devices;
        out["arenas"] = arenas;
        out["warnings"] = r.warnings;
        return out;
      },
      py::arg("model"), py::arg("dims"), py::arg("input_shapes"), py::arg("trip_counts"), py::arg("device"),
      py::arg("streams"), py::arg("order"), py::arg("partition"), py::arg("placement"), py::arg("op_properties"),
      py::arg("like"), py::arg("reuse"), py::arg("arena_algorithm"), py::arg("time_budget"), py::arg("align"),
      py::arg("pack_outputs"), py::arg("allow_unknown_sizes"));

  m.def(
      "partition",
      [](const std::string& model, const std::map<std::string, int64_t>& dims,
         const std::map<std::string, std::vector<int64_t>>& input_shapes, const std::string& device, int streams,
         const std::string& order, const std::string& placement, const std::string& op_properties) {
        memplan::PlanSettings s;
        s.shapes = shapes_from(dims, input_shapes, {});
        s.device = device;
        s.streams_per_device = streams;
        s.order = order;
        s.placement = placement;
        s.op_properties = op_properties;
        memplan::PartitionResult r;
        {
          py::gil_scoped_release unlocked;
          r = memplan::make_partition(model, s);
        }
        py::dict out;
        out["config_json"] = r.config_json;
        out["nodes"] = r.nodes;
        out["streams"] = r.streams;
        out["warnings"] = r.warnings;
        return out;
      },
      py::arg("model"), py::arg("dims"), py::arg("input_shapes"), py::arg("device"), py::arg("streams"),
      py::arg("order"), py::arg("placement"), py::arg("op_properties"));

  m.def(
      "validate",
      [](const std::string& plan_json, const std::string& name, const std::string& model, bool allow_unknown_sizes) {
        memplan::Validation v;
        {
          py::gil_scoped_release unlocked;
          v = memplan::check_plan(plan_json, name, {model, allow_unknown_sizes});
        }
        py::dict out;
        out["valid"] = v.valid();
        py::list violations;
        for (const auto& x : v.violations) violations.append(py::make_tuple(x.check, x.message));
        out["violations"] = violations;
        out["incomplete"] = v.incomplete;
        out["values_checked"] = v.values_checked;
        out["uses_checked"] = v.uses_checked;
        out["seconds"] = v.seconds;
        return out;
      },
      py::arg("plan_json"), py::arg("name"), py::arg("model"), py::arg("allow_unknown_sizes"));

  m.def(
      "inspect",
      [](const std::string& path, const std::map<std::string, int64_t>& dims,
         const std::map<std::string, std::vector<int64_t>>& input_shapes, size_t top) {
        py::gil_scoped_release unlocked;
        return memplan::inspect(path, shapes_from(dims, input_shapes, {}), top);
      },
      py::arg("path"), py::arg("dims"), py::arg("input_shapes"), py::arg("top"));
}
