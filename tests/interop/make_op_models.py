#!/usr/bin/python3
"""One tiny model per (op, opset): Cos -> OP -> Sin on a 16 KiB tensor, so ORT's activation block is 16 KiB when
OP runs in place of its input and 32 KiB when it does not. Against ORT itself, this audits the op table's
in-place facts (MayInplace/Alias on the CPU provider) op by op. Writes them into DIR and prints their paths.
usage: make_op_models.py DIR"""
import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

UNARY = ["Relu", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Softplus", "Softsign",
         "ThresholdedRelu", "Celu", "Softmax", "LogSoftmax", "Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Floor",
         "Ceil", "Erf", "Sign", "Round", "HardSwish", "Shrink", "Identity", "Dropout", "Sin"]
BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu"]


def save(name, op, opset, inputs=("s",), extra=(), inits=(), attrs=None, domain=""):
    nodes = [h.make_node("Cos", ["x"], ["s"], name="pre"),
             h.make_node(op, list(inputs), ["o"], name="op", domain=domain, **(attrs or {})),
             h.make_node("Sin", ["o"], ["y"], name="post")]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, [1, 4096])] + list(extra),
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4096])], initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)] + ([h.make_opsetid(domain, 1)] if domain else []))
    m.ir_version = 8
    path = os.path.join(out, name + ".onnx")
    onnx.save(m, path)
    print(path)


for op in UNARY:
    save(f"op_{op}_17", op, 17)
for op in BINARY:
    save(f"op_{op}_17", op, 17, inputs=("s", "z"), extra=[h.make_tensor_value_info("z", T.FLOAT, [1, 4096])])
bounds = [h.make_tensor("lo", T.FLOAT, [], [0.0]), h.make_tensor("hi", T.FLOAT, [], [6.0])]
for opset in (11, 12, 13, 14, 17):
    save(f"op_Clip_{opset}", "Clip", opset, inputs=("s", "lo", "hi"), inits=bounds)
for opset in (7, 10, 12, 13):
    save(f"op_Dropout_{opset}", "Dropout", opset)
# ONNX Runtime's contrib activations (what its optimizers fuse at level extended).
for op in ("Gelu", "QuickGelu", "FastGelu"):
    save(f"op_ms_{op}", op, 17, domain="com.microsoft")
save("op_ms_BiasGelu", "BiasGelu", 17, inputs=("s", "b"), inits=[h.make_tensor("b", T.FLOAT, [4096], [0.5] * 4096)],
     domain="com.microsoft")
