#!/usr/bin/python3
"""Plans memplan writes must match docs/plan.schema.json and validate, and `inspect --json` on each plan must match
docs/inspect-plan.schema.json. Plans every given model with the given option sets and validates each plan
and its report; then one sweep table (docs/sweep.schema.json) and one diff (docs/diff.schema.json).
Prints 'N passed, M failed'.
usage: validate_plans.py MEMPLAN DOCS_DIR OUT_DIR MODEL[:dim=V,...] ..."""
import json
import os
import subprocess
import sys

import jsonschema

memplan, docs, out_dir, *specs = sys.argv[1:]


def validator(name):
    return jsonschema.Draft202012Validator(json.load(open(os.path.join(docs, name))))


plan_schema, inspect_schema = validator("plan.schema.json"), validator("inspect-plan.schema.json")
sweep_schema, diff_schema = validator("sweep.schema.json"), validator("diff.schema.json")
option_sets = [[], ["--streams-per-device", "2"], ["--device", "gpu"], ["--reuse", "ort", "--streams-per-device", "2"],
               ["--like", "ort"]]
passed = failed = 0


def check(schema, doc, label):
    global passed, failed
    errors = sorted(schema.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        failed += 1
        print(f"FAIL {label}: {errors[0].message} at {list(errors[0].path)}")
    else:
        passed += 1


def stdout_of(args, ok_codes=(0,)):
    p = subprocess.run([memplan] + args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if p.returncode not in ok_codes:
        raise SystemExit(f"memplan {' '.join(args)} exited {p.returncode}")
    return json.loads(p.stdout)


os.makedirs(out_dir, exist_ok=True)
plans = []
for spec in specs:
    model, _, dims = spec.partition(":")
    dim_args = [a for d in dims.split(",") if d for a in ("--dim", d)]
    for k, options in enumerate(option_sets):
        out = os.path.join(out_dir, os.path.basename(model) + f".{k}.json")
        subprocess.run([memplan, "plan", model, "-o", out, "--time-budget", "0.2"] + dim_args + options,
                       check=True, stderr=subprocess.DEVNULL)
        check(plan_schema, json.load(open(out)), out)
        # Every plan is also sound (validate exits 0), the --like ort layouts included.
        v = subprocess.run([memplan, "validate", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if v.returncode != 0:
            failed += 1
            print(f"FAIL validate {out}: {v.stdout.strip().splitlines()[-1]}")
        else:
            passed += 1
        check(inspect_schema, stdout_of(["inspect", "--json", out]), "inspect --json " + out)
        plans.append(out)
if len(plans) >= 2:
    check(diff_schema, stdout_of(["diff", "--json", plans[0], plans[-1]], ok_codes=(0, 1)), "diff --json")
    model, _, dims = specs[-1].partition(":")
    fixed = [a for d in dims.split(",")[1:] if d for a in ("--dim", d)]
    if dims:
        name, _, value = dims.split(",")[0].partition("=")
        sweep = ["--dim", f"{name}={value},{int(value) + 1}"] + fixed
        check(sweep_schema, stdout_of(["plan", model, "--format", "json", "--time-budget", "0.2"] + sweep), "sweep")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
