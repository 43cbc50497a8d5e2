#!/bin/sh
# The README's main job: set up, build, and simulate the bundled workload (Philly
# workload 1, 160 jobs over 8 hours) on the bundled heterogeneous 64-GPU cluster with the
# Sia policy, printing a summary for people.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec ./build/bin/sia-ctl simulate "$@"
