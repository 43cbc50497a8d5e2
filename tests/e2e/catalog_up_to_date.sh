#!/bin/sh
# The bundled catalog (data/models) is exactly what `sia-profile import` makes of the
# published artifact. Needs the artifact beside the project (../shared/data/sia-artifact,
# or $SIA_ARTIFACT_DIR); skipped (77) where it is not present.
#   catalog_up_to_date.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
artifact=${SIA_ARTIFACT_DIR:-$SRC/../shared/data/sia-artifact}
[ -d "$artifact/traces" ] || skip "no artifact at $artifact"
"$BIN/sia-profile" import "$artifact" --out "$SRC/data/models" --check >out 2>&1 ||
  fail "data/models differs from what sia-profile import makes of $artifact: $(cat out)"
cat out
