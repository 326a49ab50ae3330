#!/usr/bin/python3
"""ONNX's backend test models (Debian's libonnx-testdata) made into models whose activation block ORT itself can be
asked about: whether each op runs in place, how large its outputs are (scripts/ort-zoo-check --testdata).

A one-node test is one op between graph inputs and graph outputs: nothing in it is an activation. Here each float
input of 16 elements or more (the op's data) is fed through Add(x, 0) and each float output through Add(y, 0), so the
op reads and writes intermediate values as it would inside a network. Every input of every test, one node or more,
becomes an initializer holding the test's own data (ORT, graph optimizations off, folds none of them): the values that
decide the outputs' shapes (indices, axes, scales, a Range's bounds, the boxes NonMaxSuppression keeps) are then
those of the test, whose declared outputs memplan reads. ORT's block holds the activations as they are for that data,
and memplan's prediction (`memplan plan --like ort`) must match it.

usage: make_testdata_op_models.py OUT_DIR [TESTDATA_DIR]
Writes OUT_DIR/FAMILY.TEST.onnx for each test it can use and prints the paths; a test is left out when it is one node
with no float data (its block is empty either way), when an input is not a tensor (sequences, optionals), when it is
one node of an opset before Add's broadcasting (7), or when its test data is missing."""
import glob
import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

out = sys.argv[1]
data = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data"
os.makedirs(out, exist_ok=True)
FLOATS = {T.FLOAT: "f32", T.DOUBLE: "f64"}
MIN_DATA = 16  # elements: smaller float inputs are parameters (Resize's scales, Clip's bounds), kept as data


def elements(tensor):
    n = 1
    for d in tensor.dims:
        n *= d
    return n


def wrap(test_dir):
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    g = model.graph
    one_node = len(g.node) == 1
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 7 and one_node:
        return None
    feeds = sorted(glob.glob(os.path.join(test_dir, "test_data_set_0", "input_*.pb")),
                   key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    if len(feeds) != len(g.input):
        return None
    pre, post, outputs, inits = [], [], [], list(g.initializer)
    zeros = set()

    def zero(elem):
        name = "memplan_zero_" + FLOATS[elem]
        if name not in zeros:
            zeros.add(name)
            inits.append(h.make_tensor(name, elem, [], [0.0]))
        return name

    for declared, feed in zip(g.input, feeds):
        if not declared.type.HasField("tensor_type"):
            return None
        tensor = onnx.TensorProto()
        with open(feed, "rb") as f:
            tensor.ParseFromString(f.read())
        elem = declared.type.tensor_type.elem_type
        if one_node and elem in FLOATS and elements(tensor) >= MIN_DATA:
            tensor.name = declared.name + "_memplan_in"
            pre.append(h.make_node("Add", [tensor.name, zero(elem)], [declared.name],
                                   name=declared.name + "_memplan_pre"))
        else:
            tensor.name = declared.name
        inits.append(tensor)
    for declared in g.output:
        if one_node and declared.type.HasField("tensor_type") and declared.type.tensor_type.elem_type in FLOATS:
            elem = declared.type.tensor_type.elem_type
            outer = declared.name + "_memplan_out"
            outputs.append(h.make_tensor_value_info(outer, elem, None))  # shape: inferred
            post.append(h.make_node("Add", [declared.name, zero(elem)], [outer], name=declared.name + "_memplan_post"))
        else:
            outputs.append(declared)
    if one_node and not pre and not post:
        return None
    wrapped = h.make_graph(pre + list(g.node) + post, g.name, [], outputs, initializer=inits,
                           value_info=list(g.value_info))
    result = h.make_model(wrapped, opset_imports=model.opset_import)
    result.ir_version = max(model.ir_version, 4)  # before IR 4 an initializer had to be a graph input too
    for f in model.functions:
        result.functions.append(f)
    return result


for test_dir in sorted(glob.glob(os.path.join(data, "*", "*"))):
    if not os.path.exists(os.path.join(test_dir, "model.onnx")):
        continue
    try:
        m = wrap(test_dir)
    except Exception:  # a test this script cannot read is one it leaves out
        m = None
    if m is None:
        continue
    path = os.path.join(out, os.path.basename(os.path.dirname(test_dir)) + "." + os.path.basename(test_dir) + ".onnx")
    onnx.save(m, path)
    print(path)
