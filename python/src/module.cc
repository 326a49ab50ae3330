// The compiled half of the Python module: memplan's library API (memplan/memplan.h) with Python types. The
// package (memplan/__init__.py) wraps it in plain Python data.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "memplan/memplan.h"

namespace py = pybind11;

namespace {

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
  m.def("save", &memplan::save, py::arg("path"), py::arg("text"));

  // The settings as objects whose fields the package sets by keyword (memplan/__init__.py).
  py::class_<memplan::ShapeSettings>(m, "ShapeSettings")
      .def(py::init<>())
      .def_readwrite("dims", &memplan::ShapeSettings::dims)
      .def_readwrite("input_shapes", &memplan::ShapeSettings::input_shapes)
      .def_readwrite("trip_counts", &memplan::ShapeSettings::trip_counts);
  py::class_<memplan::PlanSettings>(m, "PlanSettings")
      .def(py::init<>())
      .def_readwrite("shapes", &memplan::PlanSettings::shapes)
      .def_readwrite("device", &memplan::PlanSettings::device)
      .def_readwrite("streams_per_device", &memplan::PlanSettings::streams_per_device)
      .def_readwrite("order", &memplan::PlanSettings::order)
      .def_readwrite("partition_config", &memplan::PlanSettings::partition_config)
      .def_readwrite("placement", &memplan::PlanSettings::placement)
      .def_readwrite("op_properties", &memplan::PlanSettings::op_properties)
      .def_readwrite("like", &memplan::PlanSettings::like)
      .def_readwrite("reuse", &memplan::PlanSettings::reuse)
      .def_readwrite("arena_algorithm", &memplan::PlanSettings::arena_algorithm)
      .def_readwrite("time_budget_s", &memplan::PlanSettings::time_budget_s)
      .def_readwrite("alignment", &memplan::PlanSettings::alignment)
      .def_readwrite("pack_outputs", &memplan::PlanSettings::pack_outputs)
      .def_readwrite("allow_unknown_sizes", &memplan::PlanSettings::allow_unknown_sizes);

  m.def(
      "plan",
      [](const std::string& model, const memplan::PlanSettings& settings) {
        memplan::PlanResult r;
        {
          py::gil_scoped_release unlocked;
          r = memplan::make_plan(model, settings);
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
      py::arg("model"), py::arg("settings"));

  m.def(
      "partition",
      [](const std::string& model, const memplan::PlanSettings& settings) {
        memplan::PartitionResult r;
        {
          py::gil_scoped_release unlocked;
          r = memplan::make_partition(model, settings);
        }
        py::dict out;
        out["config_json"] = r.config_json;
        out["nodes"] = r.nodes;
        out["streams"] = r.streams;
        out["warnings"] = r.warnings;
        return out;
      },
      py::arg("model"), py::arg("settings"));

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
      [](const std::string& path, const memplan::ShapeSettings& shapes, size_t top) {
        py::gil_scoped_release unlocked;
        return memplan::inspect(path, shapes, top);
      },
      py::arg("path"), py::arg("shapes"), py::arg("top"));
}
