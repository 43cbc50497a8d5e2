#!/bin/sh
# A second configure of a build folder changes no compile or link command, so running
# scripts/setup.sh again (scripts/test.sh after scripts/demo.sh) rebuilds nothing: the
# sources are configured into a scratch folder twice, with the options given (the suite
# passes its own build's), and every target's flags (flags.make), link command (link.txt),
# compile_commands.json and, with Ninja, every command build.ninja runs (`ninja -t
# commands`) must be byte-identical between the two configures. Not build.ninja itself:
# CMake 3.25 writes MSVC's TARGET_PDB variables, which no GCC rule uses, and the compiler
# checks' modules among the regeneration's inputs only on a folder's first configure.
# Catches a
# configure whose first run differs from the next ones (Debian's libzmq.pc once did:
# -isystem moved from the include directories to the flags) and generated files rewritten
# with new contents on every run.
#   tests/build/configure_twice.sh SOURCE_DIR [CMAKE_ARGS...]
set -u
[ $# -ge 1 ] || { echo "usage: configure_twice.sh SOURCE_DIR [CMAKE_ARGS...]" >&2; exit 64; }
SRC=$(cd "$1" && pwd) || exit 66
shift
command -v cmake >/dev/null || { echo "cmake missing: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$tmp/build
# snapshot DIR: the commands of every target, one checksum a line.
snapshot() {
  (cd "$b" && find . \( -name flags.make -o -name link.txt -o -name compile_commands.json \) \
    -type f | LC_ALL=C sort | xargs md5sum) >"$1"
  if [ -f "$b/build.ninja" ]; then
    ninja -C "$b" -t commands >"$1.ninja" || { echo "FAIL: ninja -t commands failed"; exit 1; }
    echo "$(md5sum <"$1.ninja" | cut -d' ' -f1)  ninja-commands" >>"$1"
  fi
}
for run in 1 2; do
  cmake -S "$SRC" -B "$b" "$@" >"$tmp/configure-$run.log" 2>&1 ||
    { cat "$tmp/configure-$run.log"; echo "FAIL: configure $run failed"; exit 1; }
  snapshot "$tmp/run-$run.md5"
  [ "$run" = 1 ] && cp "$b/compile_commands.json" "$tmp/compile_commands-1.json"
done
grep -q 'flags.make$\|ninja-commands$' "$tmp/run-1.md5" ||
  { echo "FAIL: neither flags.make nor build.ninja in the build folder"; exit 1; }
if ! cmp -s "$tmp/run-1.md5" "$tmp/run-2.md5"; then
  echo "FAIL: the second configure changed these files (each change rebuilds what uses it):"
  diff "$tmp/run-1.md5" "$tmp/run-2.md5" | sed -n 's/^> [0-9a-f]*  /  /p'
  diff "$tmp/compile_commands-1.json" "$b/compile_commands.json" | head -n 8
  [ -f "$tmp/run-1.md5.ninja" ] && diff "$tmp/run-1.md5.ninja" "$tmp/run-2.md5.ninja" | head -n 8
  exit 1
fi
echo "configured twice: $(wc -l <"$tmp/run-1.md5") command files unchanged"
