#!/usr/bin/env python3
"""Tests tests/lint/function_length.py on a small sample tree: a long function with a
multi-line signature and a lambda inside, a long inline method in a class in a namespace,
a constructor whose initialiser list uses braces, an assignment operator, and short neighbours with everything
that could fool a brace counter (braces in strings, comments, raw strings, character
literals and macros; a brace initialiser; an enum). Exits 0 when every check holds."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "function_length.py")


def body(n):
    return "".join(f"  x += {i};\n" for i in range(n))


SAMPLE = (
    "#include <vector>\n"                                   # 1
    "#define OPEN {\n"                                      # 2
    "namespace sia {\n"                                     # 3
    "namespace {\n"                                         # 4
    "const std::vector<int> kTable = {1, 2,\n"              # 5
    "                                 3};\n"                # 6
    "enum class Colour { red, green };\n"                   # 7
    "}  // namespace\n"                                     # 8
    "int\n"                                                 # 9: long_one starts
    "long_one(int a,\n"                                     # 10
    "         const char* s = \"{{\") {\n"                  # 11
    "  int x = a; // a { in a comment\n"                    # 12
    "  auto f = [&](int y) { return y + '{'; };\n"          # 13
    + body(8) +                                             # 14-21
    "  /* } */ const char* r = R\"(}})\";\n"                # 22
    "  x += f(1'000);\n"                                    # 23
    "  return x;\n"                                         # 24
    "}\n"                                                   # 25: long_one ends (17 lines)
    "struct Holder {\n"                                     # 26
    "  int v{0};\n"                                         # 27
    "  Holder() : v{1} {}\n"                                # 28
    "  int inline_long() const {\n"                         # 29: starts
    "    int x = 0;\n"                                      # 30
    + body(10) +                                            # 31-40
    "    return x;\n"                                       # 41
    "  }\n"                                                 # 42: ends (14 lines)
    "};\n"                                                  # 43
    "int short_one() { return 1; }\n"                       # 44
    "Holder::Holder(int a)\n"                               # 45
    "    : v{a} {\n"                                        # 46
    "  int x = 0;\n"                                        # 47
    + body(12) +                                            # 48-59
    "}\n"                                                   # 60: ends (16 lines)
    "Holder& Holder::operator=(const Holder& o) {\n"     # 61: starts
    "  int x = 0;\n"                                        # 62
    + body(12) +                                            # 63-74
    "  return *this;\n"                                     # 75
    "}\n"                                                   # 76: ends (16 lines)
    "}  // namespace sia\n"
)


def run(args):
    p = subprocess.run([sys.executable, CHECKER] + args, capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines(), p.stderr


def main():
    failures = []

    def check(what, cond):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "lib", "a"))
        with open(os.path.join(root, "lib", "a", "sample.cpp"), "w") as f:
            f.write(SAMPLE)
        rc, out, _ = run(["--limit", "12", root])
        check(f"status 1 when over the limit, got {rc}", rc == 1)
        check(f"the three long functions, got {out}", out == [
            "lib/a/sample.cpp:9: long_one is 17 lines (limit 12)",
            "lib/a/sample.cpp:29: inline_long is 14 lines (limit 12)",
            "lib/a/sample.cpp:45: Holder::Holder is 16 lines (limit 12)",
            "lib/a/sample.cpp:61: Holder::operator= is 16 lines (limit 12)",
        ])
        rc, out, _ = run(["--limit", "17", root])
        check(f"a function of exactly the limit passes, got {rc} {out}", rc == 0 and out == [])
        allow = os.path.join(root, "allow.txt")
        with open(allow, "w") as f:
            f.write("# debts\nlib/a/sample.cpp long_one\nlib/a/sample.cpp gone\n")
        rc, out, _ = run(["--limit", "15", "--allow", allow, root])
        check(f"allowed one skipped, stale entry named, got {out}", rc == 1 and out == [
            "lib/a/sample.cpp:45: Holder::Holder is 16 lines (limit 15)",
            "lib/a/sample.cpp:61: Holder::operator= is 16 lines (limit 15)",
            f"{allow}: lib/a/sample.cpp gone is not over 15 lines any more (or is gone):"
            " remove it from the list",
        ])
        rc, _, err = run(["--bogus", root])
        check(f"bad usage is status 64, got {rc}", rc == 64 and "--bogus" in err)
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
