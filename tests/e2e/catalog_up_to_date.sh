#!/bin/sh
# The bundled catalog (data/models) is exactly what `sia-profile import` makes of the
# published artifact. Needs the artifact beside the project (../shared/data/sia-artifact,
# or $SIA_ARTIFACT_DIR); skipped (77) where it is not present.
set -u
BIN=$1
SRC=$2
artifact=${SIA_ARTIFACT_DIR:-$SRC/../shared/data/sia-artifact}
if [ ! -d "$artifact/traces" ]; then
  echo "skipped: no artifact at $artifact"
  exit 77
fi
"$BIN/sia-profile" import "$artifact" --out "$SRC/data/models" --check
