#!/usr/bin/python3
"""Models that define functions of their own (ModelProto.functions, as torch's export_modules_as_functions and
onnxscript write them) and call them. ONNX Runtime inlines every such call when it loads the model, before it
partitions, at every optimization level; memplan must plan the graph ORT runs, not the calls. Against ORT itself
(ort_inlined.js: execution order and value names of the graph ORT saves; ort_memory.js: ORT's activation block
against memplan's prediction) these check onnx_io/src/function_inline.cc. Writes the models into DIR and prints
their paths.
usage: make_local_function_models.py DIR"""
import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = T.FLOAT
ACME = h.make_opsetid("com.acme", 1)


def save(name, nodes, functions, inputs, outputs, inits=(), opset=14):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, F, s) for n, s in inputs],
                     [h.make_tensor_value_info(n, F, s) for n, s in outputs], initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), ACME], functions=functions)
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(out, f"{name}.onnx")
    onnx.save(m, path)
    print(path)


def ref(name, attr_type):
    """An attribute that takes the call's attribute of that name (onnx.helper.make_attribute_ref, newer than 1.12)."""
    a = onnx.AttributeProto()
    a.name, a.ref_attr_name, a.type = name, name, attr_type
    return a


def node_with(op, inputs, outputs, *attributes):
    n = h.make_node(op, inputs, outputs)
    n.attribute.extend(attributes)
    return n


def function(name, inputs, outputs, nodes, attributes=()):
    return h.make_function("com.acme", name, inputs, outputs, nodes, [h.make_opsetid("", 14), ACME],
                           list(attributes))


# Two calls of one function: each call's intermediates are values of their own (_inlfunc_Block_t, then
# _inlfunc_Block_token_0_t), which the plan must hold.
block = function("Block", ["a"], ["b"], [h.make_node("MatMul", ["a", "a"], ["t"]), h.make_node("Relu", ["t"], ["u"]),
                                         h.make_node("Add", ["u", "t"], ["b"], name="sum")])
save("local_calls", [h.make_node("Block", ["x"], ["m"], domain="com.acme", name="first"),
                     h.make_node("Block", ["m"], ["y"], domain="com.acme", name="second")],
     [block], [("x", [64, 64])], [("y", [64, 64])])

# A function calling another, a function op ORT expands after partitioning (HardSwish) inside a body, and a call in an
# If branch (whose graph names its inlined nodes on its own).
inner = function("Inner", ["a"], ["b"], [h.make_node("Sigmoid", ["a"], ["s"], name="sig"),
                                         h.make_node("Mul", ["s", "a"], ["b"], name="mul")])
outer = function("Outer", ["a"], ["b"], [h.make_node("Inner", ["a"], ["i"], domain="com.acme", name="call_inner"),
                                         h.make_node("HardSwish", ["i"], ["hs"]), h.make_node("Relu", ["hs"], ["b"])])
then_g = h.make_graph([h.make_node("Inner", ["o1"], ["t_out"], domain="com.acme", name="in_then")], "then", [],
                      [h.make_tensor_value_info("t_out", F, [32, 48])])
else_g = h.make_graph([h.make_node("Relu", ["o1"], ["e_out"], name="in_else")], "else", [],
                      [h.make_tensor_value_info("e_out", F, [32, 48])])
save("local_nested", [h.make_node("HardSwish", ["x"], ["h0"], name="hs0"),
                      h.make_node("Outer", ["h0"], ["o1"], domain="com.acme", name="outer1"),
                      h.make_node("ReduceSum", ["o1"], ["r"], keepdims=0, name="rs"),
                      h.make_node("Greater", ["r", "zero"], ["c"], name="gt"),
                      h.make_node("If", ["c"], ["ifo"], then_branch=then_g, else_branch=else_g, name="if"),
                      h.make_node("Add", ["ifo", "o1"], ["y"], name="add")],
     [inner, outer], [("x", [32, 48])], [("y", [32, 48])], inits=[h.make_tensor("zero", F, [], [0.0])])

# Attributes passed by reference (the call's alpha and perm), and a second output the call leaves out.
scaled = function("Scaled", ["a"], ["b", "extra"],
                  [node_with("LeakyRelu", ["a"], ["l"], ref("alpha", onnx.AttributeProto.FLOAT)),
                   node_with("Transpose", ["l"], ["b"], ref("perm", onnx.AttributeProto.INTS)),
                   h.make_node("Exp", ["a"], ["extra"])], attributes=["alpha", "perm"])
save("local_attributes", [h.make_node("Scaled", ["x"], ["m", ""], domain="com.acme", name="s1", alpha=0.2, perm=[1, 0]),
                          h.make_node("Scaled", ["m"], ["y", "e"], domain="com.acme", name="s2", alpha=0.1, perm=[1, 0]),
                          h.make_node("Add", ["y", "x"], ["z"], name="add")],
     [scaled], [("x", [16, 40])], [("z", [16, 40]), ("e", [40, 16])])
