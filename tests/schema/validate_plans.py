#!/usr/bin/python3
"""Plans memplan writes must match docs/plan.schema.json. Plans every given model with the given option
sets and validates each plan; prints 'N passed, M failed'.
usage: validate_plans.py MEMPLAN SCHEMA OUT_DIR MODEL[:dim=V,...] ..."""
import json
import os
import subprocess
import sys

import jsonschema

memplan, schema_path, out_dir, *specs = sys.argv[1:]
schema = json.load(open(schema_path))
validator = jsonschema.Draft202012Validator(schema)
option_sets = [[], ["--streams-per-device", "2"], ["--device", "gpu"], ["--reuse", "ort", "--streams-per-device", "2"]]
passed = failed = 0
os.makedirs(out_dir, exist_ok=True)
for spec in specs:
    model, _, dims = spec.partition(":")
    dim_args = [a for d in dims.split(",") if d for a in ("--dim", d)]
    for k, options in enumerate(option_sets):
        out = os.path.join(out_dir, os.path.basename(model) + f".{k}.json")
        subprocess.run([memplan, "plan", model, "-o", out, "--time-budget", "0.2"] + dim_args + options,
                       check=True, stderr=subprocess.DEVNULL)
        plan = json.load(open(out))
        errors = sorted(validator.iter_errors(plan), key=lambda e: list(e.path))
        if errors:
            failed += 1
            print(f"FAIL {out}: {errors[0].message} at {list(errors[0].path)}")
        else:
            passed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
