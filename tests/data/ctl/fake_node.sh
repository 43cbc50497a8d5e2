#!/bin/sh
# A node for sia-ctl round's [nodes] commands, for the e2e tests: `fake_node.sh MODE NODE
# DIR` answers MODE (status, reports, apply) as an idle sia-run would -- up, no jobs, no
# reports, nothing to do -- unless the file DIR/NODE.MODE says otherwise: "huge" prints
# 100 MB, "empty" prints nothing (both exit 0).
case "$(cat "$3/$2.$1" 2>/dev/null)" in
huge) cat >/dev/null; exec head -c 100000000 /dev/zero ;;
empty) cat >/dev/null; exit 0 ;;
esac
case "$1" in
status)
  printf '{"apiVersion":"sia/v1","kind":"RunStatus","metadata":{},"data":{"node":"%s","jobs":[]}}\n' "$2"
  ;;
apply)
  cat >/dev/null
  printf '{"apiVersion":"sia/v1","kind":"RunPlan","metadata":{},"data":{"node":"%s","actions":[]}}\n' "$2"
  ;;
esac
