#!/usr/bin/env bash
# The Debian package, installed into a scratch root, works as a user would use it: its dependencies are Debian 12
# packages, `memplan --help` and a plan run, `man memplan` shows the page, tab completion completes, a C++ program
# builds against the library with find_package(memplan), and `import memplan` plans a model.
# usage: tests/install/check_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$scratch/pkg" >"$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log"; fail "cpack"; }
deb=$(ls "$scratch"/pkg/memplan_*.deb)
echo "$deb: $(du -h "$deb" | cut -f1)"

echo "== dependencies are Debian packages, installed on this (Debian 12) machine"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
[ -n "$depends" ] || fail "no Depends field"
IFS=',' read -ra items <<<"$depends"
for item in "${items[@]}"; do
  name=$(echo "$item" | sed -e 's/^ *//' -e 's/ .*//')
  dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed" ||
    fail "dependency $name is not an installed Debian package"
done

echo "== the package's contents, extracted into a scratch root"
dpkg-deb -x "$deb" "$scratch/root"
usr=$scratch/root/usr
for f in bin/memplan bin/memplan-replay share/man/man1/memplan.1 share/man/man1/memplan-replay.1 \
         share/bash-completion/completions/memplan share/zsh/vendor-completions/_memplan include/memplan/memplan.h \
         include/memplan/error.h lib/cmake/memplan/memplanConfig.cmake share/doc/memplan/README.md \
         share/doc/memplan/docs/planning.md share/doc/memplan/docs/plan.schema.json; do
  [ -e "$usr/$f" ] || fail "$f missing from the package"
done
ls "$usr"/lib/libmemplan.so* >/dev/null || fail "libmemplan.so missing"
ls "$usr"/lib/python3/dist-packages/memplan/_memplan*.so >/dev/null || fail "the Python module is missing"

echo "== memplan --help, and a plan"
"$usr/bin/memplan" --help | grep -q "plans the memory of an ONNX model" || fail "memplan --help"
"$usr/bin/memplan" plan "$src/samples/residual.onnx" -o "$scratch/plan.json" 2>/dev/null
"$usr/bin/memplan" validate "$scratch/plan.json" | grep -q ": valid$" || fail "memplan validate"
"$usr/bin/memplan-replay" "$scratch/plan.json" >/dev/null || fail "memplan-replay"

echo "== man memplan"
MANPATH="$usr/share/man" MANWIDTH=100 man -P cat memplan 2>/dev/null >"$scratch/man.txt" || fail "man memplan"
grep -q "plan the memory of an ONNX model ahead of time" "$scratch/man.txt" || fail "man memplan: NAME line"
for cmd in inspect shapes partition plan solve validate diff corrupt replay completion; do
  grep -q "memplan $cmd" "$scratch/man.txt" || fail "man memplan does not describe '$cmd'"
done
grep -q -- "--streams-per-device" "$scratch/man.txt" || fail "man memplan lacks an option"
MANPATH="$usr/share/man" man -P cat memplan-replay 2>/dev/null | grep -q -- "--backend" || fail "man memplan-replay"

echo "== tab completion (bash; zsh through stubs of _describe and _arguments)"
complete_bash() {  # complete_bash WORD...: what bash completes for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _memplan; echo "${COMPREPLY[*]}"' _ \
    "$usr/share/bash-completion/completions/memplan" "$@"
}
[ "$(complete_bash memplan pl)" = "plan" ] || fail "bash: 'memplan pl<TAB>' gave '$(complete_bash memplan pl)'"
[ "$(complete_bash memplan plan --streams-per)" = "--streams-per-device" ] || fail "bash: option completion"
[ "$(complete_bash memplan plan --order p)" = "priority" ] || fail "bash: value completion gave '$(complete_bash memplan plan --order p)'"
[ "$(complete_bash memplan completion z)" = "zsh" ] || fail "bash: positional choices"
zsh -n "$usr/share/zsh/vendor-completions/_memplan" || fail "zsh completion does not parse"
grep -q "^#compdef memplan" "$usr/share/zsh/vendor-completions/_memplan" || fail "zsh: no #compdef"
complete_zsh() {  # complete_zsh WORD...: the specs the function hands to zsh's _describe/_arguments (stubbed)
  zsh -f -c 'source "$1" 2>/dev/null; _describe() { print -rl -- "${(@P)2}"; }; _arguments() { print -rl -- "$@"; }
             shift; words=("$@"); CURRENT=$#; _memplan' _ "$usr/share/zsh/vendor-completions/_memplan" "$@"
}
complete_zsh memplan pl | grep -q "^plan:" || fail "zsh: commands"
complete_zsh memplan plan --dev | grep -q "^--device\[" || fail "zsh: options of 'plan'"
complete_zsh memplan plan --order "" | grep -q "^--order\[.*:(default priority written memory)$" || fail "zsh: option values"
complete_zsh memplan completion "" | grep -q "(bash zsh)" || fail "zsh: positional choices"

echo "== a C++ program built with find_package(memplan)"
cmake -S "$src/examples/cpp" -B "$scratch/example" -DCMAKE_PREFIX_PATH="$usr" >"$scratch/example.log" 2>&1 ||
  { cat "$scratch/example.log"; fail "configuring the example"; }
cmake --build "$scratch/example" >>"$scratch/example.log" 2>&1 || { cat "$scratch/example.log"; fail "building the example"; }
out=$("$scratch/example/plan_totals" "$src/samples/free_dims.onnx" batch=2 seq=6)
echo "$out"
echo "$out" | grep -q "^plan valid" || fail "the example's plan"
"$scratch/example/plan_totals" "$src/samples/free_dims.onnx" >/dev/null 2>&1 && fail "an incomplete plan should fail"

echo "== import memplan"
PYTHONPATH="$usr/lib/python3/dist-packages" /usr/bin/python3 - "$src/samples/free_dims.onnx" <<'PY'
import sys
import memplan
p = memplan.plan(sys.argv[1], dims={"batch": 2, "seq": 6}, device="gpu", streams=2)
assert p.complete and p.total() > 0, p
assert memplan.validate(p, model=sys.argv[1])["valid"]
assert memplan.__file__.startswith(sys.path[0]) or "dist-packages" in memplan.__file__, memplan.__file__
print("import memplan:", memplan.__file__, p)
PY
echo "package checks passed"
