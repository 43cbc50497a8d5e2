#!/bin/sh
# The README's main job: set up, build, and run sia on the bundled example.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec ./build/bin/sia-estimate --cluster data/clusters/sia-hetero-64.toml \
  data/examples/jobs.json data/examples/job.toml -o table
