#!/usr/bin/env python3
"""Fails when a function defined in the C++ sources under the given folders is longer than
the limit (150 lines by default), counting from the first line of its declaration to the
line of its closing brace.

    function_length.py [--limit N] [--allow FILE] ROOT [DIR...]

DIRs (default: lib) are relative to ROOT, and so are the paths it prints. Comments,
string and character literals (raw strings too) and preprocessor lines are blanked first;
then the braces at namespace, class and `extern "C"` scope are classified: a namespace or
class body is entered, an enum or an initialiser (`= {...}`, a member's `x{0}`) is
skipped, anything else after a parameter list is a function body and is measured whole,
lambdas and local classes included. The allow-list names one function a line as
`PATH NAME` (NAME as printed, qualified as written at its definition); `#` starts a
comment. Prints one line per function over the limit, `PATH:LINE: NAME is N lines (limit
L)`, and one per allow-list entry that no longer matches anything; exits 1 if it printed
anything, 0 otherwise, 64 on bad usage, 66 on an unreadable file.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".hpp", ".cc", ".h", ".cu")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces, newlines
    kept so line numbers stay."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a directive, with its continuation lines
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not _ident(text[i - 1])
                                                                 or text[i - 1] in "uU8L"):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            end = text.find(close, i + m.end())
            end = n if end < 0 else end + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and _ident(text[i - 1]))):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident(c):
    return c.isalnum() or c == "_"


def match_brace(code, i):
    """The index of the brace closing the one at i (len(code) if unbalanced)."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code)


def top_level(head):
    """The head with everything inside (), <> of templates and [] removed, so that its
    top-level tokens can be tested."""
    out, depth = [], 0
    for c in head:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def function_name(head):
    """The (qualified) name before the parameter list of a definition's head."""
    flat = " ".join(head.split())
    flat = re.sub(r"^template\s*<.*?>\s*", "", flat)
    m = re.search(r"((?:[A-Za-z_~][\w]*(?:<[^()]*?>)?::)*(?:operator\s*[^\s(]+|~?[A-Za-z_]\w*))"
                  r"\s*\(", flat)
    return m.group(1) if m else flat[:40]


def functions(code):
    """(name, first line, last line) of every function body at namespace or class scope."""
    found = []

    def scope(lo, hi):
        head_start = lo
        i = lo
        while i < hi:
            c = code[i]
            if c in ";":
                head_start = i + 1
            elif c == "}":
                head_start = i + 1
            elif c == "{":
                head = code[head_start:i]
                flat = top_level(head)
                end = match_brace(code, i)
                if re.search(r"\b(namespace|extern)\b", flat) and "(" not in head:
                    scope(i + 1, end)
                    head_start = end + 1
                elif re.search(r"\benum\b", flat):
                    pass  # skipped; the head continues to its `;`
                elif re.search(r"\b(class|struct|union)\b", flat) and "(" not in head:
                    scope(i + 1, end)
                elif "(" not in head or re.search(r"(^|[^=!<>+\-*/%&|^])=($|[^=])",
                                                  re.sub(r"\boperator\s*\S*", "", flat)):
                    pass  # an initialiser; the head continues to its `;`
                elif _member_init_brace(head):
                    pass  # a member initialised with braces in a constructor's list
                else:
                    first = head_start + len(head) - len(head.lstrip())
                    found.append((function_name(head), code.count("\n", 0, first) + 1,
                                  code.count("\n", 0, end) + 1))
                    head_start = end + 1
                i = end
            i += 1

    scope(0, len(code))
    return found


def _member_init_brace(head):
    """Whether a `{` after this head opens a member's initialiser in a constructor's
    initialiser list (`Foo() : a_{1}`), not the body."""
    flat = top_level(head)
    if not re.search(r"(^|[^:]):([^:]|$)", flat):
        return False
    tail = head.rstrip()
    return bool(tail) and (_ident(tail[-1]) or tail[-1] == ">")


def read_allow(path):
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2:
                raise ValueError(f"{path}:{number}: expected `PATH NAME`, got {line!r}")
            allowed[(parts[0], parts[1])] = False
    return allowed


def main(argv):
    args = argv[1:]
    limit, allow_file = 150, None
    while args and args[0].startswith("--"):
        if args[0] == "--limit" and len(args) > 1 and args[1].isdigit():
            limit, args = int(args[1]), args[2:]
        elif args[0] == "--allow" and len(args) > 1:
            allow_file, args = args[1], args[2:]
        else:
            print(f"function_length.py: error: unknown option {args[0]}", file=sys.stderr)
            return 64
    if not args:
        print("usage: function_length.py [--limit N] [--allow FILE] ROOT [DIR...]",
              file=sys.stderr)
        return 64
    root, dirs = args[0], args[1:] or ["lib"]
    try:
        allowed = read_allow(allow_file) if allow_file else {}
    except (OSError, ValueError) as e:
        print(f"function_length.py: error: {e}", file=sys.stderr)
        return 66 if isinstance(e, OSError) else 65
    problems = []
    for d in dirs:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                try:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        code = blank(f.read())
                except OSError as e:
                    print(f"function_length.py: error: {rel}: {e.strerror}", file=sys.stderr)
                    return 66
                for fname, first, last in functions(code):
                    length = last - first + 1
                    if length <= limit:
                        continue
                    if (rel, fname) in allowed:
                        allowed[(rel, fname)] = True
                        continue
                    problems.append(f"{rel}:{first}: {fname} is {length} lines (limit {limit})")
    for (rel, fname), used in allowed.items():
        if not used:
            problems.append(f"{allow_file}: {rel} {fname} is not over {limit} lines any more"
                            " (or is gone): remove it from the list")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
