#!/usr/bin/python3
"""Rewrites a model of ONNX opset 13-17 as the same computation at a newer opset (18-24), as ONNX's version converter
would (python3-onnx 1.12's stops at 17): the reductions other than ReduceSum take their axes as an input from opset 18
(the attribute becomes an int64 initializer of the graph the node is in, subgraphs included); nothing else a model
of those opsets uses changed meaning. The IR version rises to what the opset needs. Every value keeps its shape, so
memplan must plan the new file exactly as the old one: how tests check the rules of newer opsets on real
architectures (tests/interop/check_upgraded_models.py).
usage: upgrade_opset.py IN OUT [OPSET]  (default 21)"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

REDUCTIONS = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
              "ReduceProd", "ReduceSumSquare"}


def upgrade_graph(graph, taken):
    for node in graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                upgrade_graph(a.g, taken)
            for g in a.graphs:
                upgrade_graph(g, taken)
        if node.domain not in ("", "ai.onnx") or node.op_type not in REDUCTIONS:
            continue
        axes = [a for a in node.attribute if a.name == "axes"]
        if not axes:
            continue
        name = f"{node.output[0]}_axes"
        while name in taken:
            name += "_"
        taken.add(name)
        graph.initializer.append(numpy_helper.from_array(np.array(list(axes[0].ints), dtype=np.int64), name))
        node.attribute.remove(axes[0])
        del node.input[1:]
        node.input.append(name)


def main():
    source, target = sys.argv[1], sys.argv[2]
    opset = int(sys.argv[3]) if len(sys.argv) > 3 else 21
    model = onnx.load(source, load_external_data=False)
    old = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if not old or not 13 <= old[0].version <= 17:
        sys.exit(f"upgrade_opset: {source} imports ONNX opset {old[0].version if old else 'none'}; 13 to 17 expected")
    taken = {v.name for v in model.graph.value_info} | {t.name for t in model.graph.initializer}
    taken |= {o for n in model.graph.node for o in n.output}
    upgrade_graph(model.graph, taken)
    old[0].version = opset
    model.ir_version = max(model.ir_version, 10 if opset >= 21 else 9 if opset >= 19 else 8)
    onnx.save(model, target)


main()
