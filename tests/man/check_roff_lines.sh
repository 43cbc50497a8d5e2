#!/bin/sh
# Checks that no man page has a text line that roff would take for a request and drop: a
# line beginning with "." or "'" must be a request or macro the pages use (man(7), tbl);
# text that begins so is written "\&..." (sia-ctl(1) once lost a line "...\"); the
# brackets run ..." this way).
#   check_roff_lines.sh MAN_DIR
# Exit status: 0 none; 1 some (each listed on stderr as FILE:LINE: text); 2 usage.
set -u
me=check_roff_lines.sh
if [ "$#" -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $me MAN_DIR" >&2
  exit 2
fi
found=0
checked=0
for page in "$1"/*.[1-9]; do
  [ -f "$page" ] || continue
  checked=$((checked + 1))
  awk -v file="$page" '
    BEGIN {
      n = split("B BR RB I IR RI BI IB SB SM TP TQ PP P LP IP HP RS RE SH SS TH EX EE " \
                "TS TE UR UE MT ME SY YS OP br sp nf fi in ti ft ad na ne", k, " ")
      for (i = 1; i <= n; ++i) known[k[i]] = 1
    }
    /^[.\047]/ {
      line = substr($0, 2)
      sub(/^[ \t]+/, "", line)
      if (line == "" || substr(line, 1, 2) == "\\\"") next   # "." alone, a comment
      name = line
      sub(/[ \t].*/, "", name)
      if (!(name in known)) {
        printf "%s:%d: a text line roff takes for the request \"%s\" and drops " \
               "(write \\&%s): %s\n", file, NR, name, substr($0, 1, 1), $0 > "/dev/stderr"
        bad = 1
      }
    }
    END { exit bad }' "$page" || found=1
done
if [ "$checked" -eq 0 ]; then
  echo "$me: $1: no man page" >&2
  exit 2
fi
exit $found
