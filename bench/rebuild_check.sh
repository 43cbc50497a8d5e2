#!/bin/sh
# Rebuilds: what ./scripts/demo.sh then ./scripts/test.sh do to a fresh clone, measured.
# The source tree's files (tracked and untracked, not ignored: what a clone of the working
# tree would hold) are copied into a scratch folder, and scripts/setup.sh runs there twice
# without touching packages or the system's Python (SIA_SKIP_APT=1, SIA_PYTHON unset to a
# path that does not exist). The first run configures and builds; the second must build
# nothing (no compile, link or generate step; with Ninja, "ninja: no work to do."). Prints
# the steps and seconds of each run. tests/build/configure_twice.sh is the suite's cheap
# check of the same promise (every compile and link command unchanged by a second
# configure); this one builds.
#   bench/rebuild_check.sh SOURCE_DIR [TARGET...]
# TARGETs (SIA_BUILD_TARGETS of scripts/setup.sh) limit the build; the default is all.
# CMake's environment applies: CMAKE_GENERATOR=Ninja, CMAKE_CXX_COMPILER_LAUNCHER=ccache
# (with ccache's base_dir, set TMPDIR to a folder under it so that objects are shared).
set -u
[ $# -ge 1 ] || { echo "usage: bench/rebuild_check.sh SOURCE_DIR [TARGET...]" >&2; exit 64; }
SRC=$(cd "$1" && pwd) || exit 66
shift
for tool in git cmake tar; do
  command -v "$tool" >/dev/null || { echo "rebuild_check: no $tool: skipped"; exit 77; }
done
tmp=$(mktemp -d) || exit 73
trap 'rm -rf "$tmp"' EXIT
clone=$tmp/sia
mkdir "$clone"
# Tracked files deleted in the working tree are left out (--ignore-failed-read).
(cd "$SRC" && git ls-files -z -co --exclude-standard |
  tar -c --null -T - --ignore-failed-read -f - 2>/dev/null) | (cd "$clone" && tar -xf -) ||
  { echo "rebuild_check: could not copy $SRC's files"; exit 74; }
[ -x "$clone/scripts/setup.sh" ] || { echo "rebuild_check: $SRC has no scripts/setup.sh"; exit 66; }

# A build step: Ninja's "[3/40] Building CXX object ...", Make's "[  7%] Linking CXX
# executable ..." (Make prints no percentage under ctest).
step='^(\[[ 0-9/%]+\] )?(Building|Linking|Generating) '
# setup N: scripts/setup.sh in the clone, its output in $tmp/setup-N.log; sets steps and
# seconds.
setup() {
  start=$(date +%s.%N)
  (cd "$clone" && SIA_SKIP_APT=1 SIA_PYTHON="$tmp/no-python" SIA_BUILD_TARGETS="$*" \
    ./scripts/setup.sh) >"$tmp/setup-$run.log" 2>&1 ||
    { cat "$tmp/setup-$run.log"; echo "FAIL: scripts/setup.sh run $run failed"; exit 1; }
  seconds=$(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')
  steps=$(grep -Ec "$step" "$tmp/setup-$run.log")
}
run=1
setup "$@"
echo "first setup (demo.sh): $steps build steps in $seconds s"
[ "$steps" -gt 0 ] || { cat "$tmp/setup-1.log"; echo "FAIL: the first setup built nothing"; exit 1; }
run=2
setup "$@"
echo "second setup (test.sh): $steps build steps in $seconds s"
if [ "$steps" -ne 0 ]; then
  echo "FAIL: the second setup rebuilt (nothing changed in between):"
  grep -E "$step" "$tmp/setup-2.log" | head -n 20
  exit 1
fi
if grep -q '^ninja: ' "$tmp/setup-2.log"; then
  grep -q '^ninja: no work to do\.$' "$tmp/setup-2.log" ||
    { cat "$tmp/setup-2.log"; echo "FAIL: ninja did not report \"no work to do\""; exit 1; }
  echo "ninja: no work to do."
fi
