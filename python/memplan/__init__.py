"""memplan: plan the memory of an ONNX model ahead of time, from Python.

    import memplan
    p = memplan.plan("model.onnx", dims={"batch": 8}, device="gpu", streams=2)
    p.devices[0]["total"]          # bytes the largest device needs
    p.values                       # every value: name, kind, bytes, arena, offset, ...
    p.save("plan.json")            # the plan file, as `memplan plan -o plan.json` writes it

Every function raises memplan.Error for bad input, with the command line's message and its exit code
(e.exit_code: 1 bad input, 2 usage, 3 invalid plan). The same options as the command line, with Python names.
"""
import json as _json
import os as _os

from ._memplan import Error
from . import _memplan

__all__ = ["Error", "Plan", "plan", "partition", "validate", "inspect", "version"]


def version():
    """memplan's version, e.g. '0.1.0'."""
    return _memplan.version()


class Plan:
    """A plan: the plan file's JSON (`json`, parsed as `doc`) and its figures as plain Python data."""

    def __init__(self, raw):
        self.json = raw["json"]
        self.doc = _json.loads(self.json)
        self.complete = raw["complete"]
        self.devices = raw["devices"]  # largest first: device, total, activations, outputs, weights, inputs
        self.arenas = raw["arenas"]  # name, device, purpose, bytes, lower_bound, algorithm, optimal, buffers
        self.warnings = raw["warnings"]
        self.values = self.doc["values"]
        self.nodes = self.doc["nodes"]
        self.streams = self.doc["streams"]

    def total(self, device=None):
        """Bytes `device` needs ('cpu', 'gpu:0'); the largest device when not given."""
        if device is None:
            return self.devices[0]["total"] if self.devices else 0
        for d in self.devices:
            if d["device"] == device:
                return d["total"]
        raise KeyError(f"the plan has no device '{device}' (it has {', '.join(d['device'] for d in self.devices)})")

    def save(self, path):
        """Writes the plan file (complete or not at all: a temporary file renamed into place)."""
        _memplan.save(_path(path), self.json)

    def __repr__(self):
        devices = ", ".join(f"{d['device']} {d['total']} B" for d in self.devices)
        return f"<memplan.Plan {len(self.nodes)} nodes, {len(self.values)} values: {devices}>"


def _path(model):
    return _os.fspath(model)


def _shapes(dims, input_shapes, trip_counts=None):
    s = _memplan.ShapeSettings()
    s.dims = dict(dims or {})
    s.input_shapes = {k: list(v) for k, v in (input_shapes or {}).items()}
    s.trip_counts = dict(trip_counts or {})
    return s


def _settings(dims=None, input_shapes=None, trip_counts=None, device="cpu", streams=1, order="default",
              partition=None, placement=None, op_properties=None, like=None, reuse="memplan", arena_algorithm="auto",
              time_budget=1.0, align=256, pack_outputs=False, allow_unknown_sizes=False):
    s = _memplan.PlanSettings()
    s.shapes = _shapes(dims, input_shapes, trip_counts)
    s.device, s.streams_per_device, s.order = device, int(streams), order
    s.partition_config, s.placement = _path(partition or ""), _path(placement or "")
    s.op_properties, s.like, s.reuse = _path(op_properties or ""), like or "", reuse
    s.arena_algorithm, s.time_budget_s, s.alignment = arena_algorithm, float(time_budget), int(align)
    s.pack_outputs, s.allow_unknown_sizes = bool(pack_outputs), bool(allow_unknown_sizes)
    return s


def plan(model, dims=None, input_shapes=None, trip_counts=None, device="cpu", streams=1, order="default",
         partition=None, placement=None, op_properties=None, like=None, reuse="memplan", arena_algorithm="auto",
         time_budget=1.0, align=256, pack_outputs=False, allow_unknown_sizes=False):
    """Plans `model` (a path) as `memplan plan` does, with its options under Python names; returns a Plan."""
    return Plan(_memplan.plan(_path(model), _settings(dims, input_shapes, trip_counts, device, streams, order,
                                                      partition, placement, op_properties, like, reuse,
                                                      arena_algorithm, time_budget, align, pack_outputs,
                                                      allow_unknown_sizes)))


def partition(model, dims=None, input_shapes=None, device="cpu", streams=1, order="default", placement=None,
              op_properties=None):
    """The ONNX Runtime partition config `memplan partition` writes, as a dict."""
    raw = _memplan.partition(_path(model), _settings(dims, input_shapes, None, device, streams, order, None, placement,
                                                     op_properties))
    return _json.loads(raw["config_json"])


def validate(plan, model=None, allow_unknown_sizes=False):
    """Checks a plan (a Plan, a dict, JSON text or a path) as `memplan validate` does. Returns a dict: valid,
    violations [(check, message)], incomplete, values_checked, uses_checked, seconds."""
    if isinstance(plan, Plan):
        text, name = plan.json, "plan"
    elif isinstance(plan, dict):
        text, name = _json.dumps(plan), "plan"
    elif isinstance(plan, str) and plan.lstrip().startswith("{"):
        text, name = plan, "plan"
    else:
        name = _path(plan)
        with open(name, encoding="utf-8") as f:
            text = f.read()
    return _memplan.validate(text, name, _path(model or ""), bool(allow_unknown_sizes))


def inspect(path, dims=None, input_shapes=None, top=10):
    """`memplan inspect --json` of a model or a plan file, as a dict."""
    return _json.loads(_memplan.inspect(_path(path), _shapes(dims, input_shapes), int(top)))
