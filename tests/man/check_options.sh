#!/bin/sh
# Checks that a program's man page mentions every option its --help shows.
#   check_options.sh BIN_DIR MAN_DIR PROGRAM [SUBCOMMAND...]
# Runs BIN_DIR/PROGRAM --help and, for each SUBCOMMAND, BIN_DIR/PROGRAM SUBCOMMAND --help;
# collects every long option (--foo) and short option (-o) they print, and looks for each
# in MAN_DIR/PROGRAM.1, where the page may spell a dash as "\-" and wrap options in font
# escapes (\fB\-\-foo\fR). "--out" is not satisfied by "--output". Each SUBCOMMAND must be
# named in the page too.
# Exit status: 0 all found; 1 something is missing (listed on stderr); 2 usage error or a
# --help that fails or shows no option.
set -u

me=check_options.sh
if [ "$#" -lt 3 ]; then
  echo "usage: $me BIN_DIR MAN_DIR PROGRAM [SUBCOMMAND...]" >&2
  exit 2
fi
bin_dir=$1
man_dir=$2
program=$3
shift 3
exe=$bin_dir/$program
page=$man_dir/$program.1

if [ ! -x "$exe" ]; then
  echo "$me: $exe: not an executable file" >&2
  exit 2
fi
if [ ! -r "$page" ]; then
  echo "$me: $page: cannot read the man page" >&2
  exit 2
fi

# The page as plain text: font escapes removed, roff dashes made plain.
text=$(sed -e 's/\\f\[[^]]*\]//g' \
           -e 's/\\f([A-Za-z0-9][A-Za-z0-9]//g' \
           -e 's/\\f[A-Za-z0-9]//g' \
           -e 's/\\(hy/-/g' -e 's/\\(mi/-/g' -e 's/\\(en/-/g' \
           -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\%//g' "$page")

# Prints the options shown in one help text (stdin), one per line.
extract() {
  awk '{
    line = " " $0 " "
    gsub(/[^A-Za-z0-9-]/, " ", line)
    while (match(line, / --?[A-Za-z][A-Za-z0-9-]*/)) {
      tok = substr(line, RSTART + 1, RLENGTH - 1)
      line = substr(line, RSTART + RLENGTH)
      if (substr(tok, 1, 2) == "--" || length(tok) == 2) print tok
    }
  }'
}

# mentioned WORD: true if the page has WORD not preceded or followed by a name character.
mentioned() {
  printf '%s\n' "$text" | grep -Eq -- "(^|[^A-Za-z0-9_-])$1([^A-Za-z0-9_-]|\$)"
}

missing=0
checked=0
help_of() {  # help_of LABEL [SUBCOMMAND]
  label=$1
  shift
  if ! out=$(NO_COLOR=1 "$exe" "$@" --help </dev/null 2>&1); then
    echo "$me: '$label --help' failed:" >&2
    printf '%s\n' "$out" >&2
    exit 2
  fi
  opts=$(printf '%s\n' "$out" | extract | sort -u)
  if [ -z "$opts" ]; then
    echo "$me: '$label --help' shows no option" >&2
    exit 2
  fi
  for opt in $opts; do
    checked=$((checked + 1))
    if ! mentioned "$opt"; then
      echo "$me: $page does not mention $opt (shown by '$label --help')" >&2
      missing=$((missing + 1))
    fi
  done
}

help_of "$program"
for sub in "$@"; do
  if ! mentioned "$sub"; then
    echo "$me: $page does not mention the subcommand $sub" >&2
    missing=$((missing + 1))
  fi
  help_of "$program $sub" "$sub"
done

if [ "$missing" -gt 0 ]; then
  echo "$me: $program: $missing missing from $page" >&2
  exit 1
fi
echo "$me: $program: all $checked options found in $page"
exit 0
