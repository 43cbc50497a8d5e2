"""JSON checks for the e2e scripts, through a parser (never the order of keys in a line).

Sourced through lib/harness.sh (json_get, json_has, json_eval, json_check); not a test.
  jsonq.py get FILE PATH   prints the value at PATH (".data.jobs[0].name"; "" or "." is the
                           whole): a string as it is, anything else as compact JSON; status 1
                           when PATH is not there
  jsonq.py eval FILE EXPR  prints the Python expression EXPR's value (as `get` prints it)
  jsonq.py has FILE EXPR   status 0 when EXPR is true, 1 when false
  jsonq.py select FILE EXPR  prints, as compact JSON one a line and in order, each
                           document for which EXPR (over d, that document) is true
FILE is a path or - (stdin) holding one JSON document, several one after another, or JSON
Lines. EXPR sees: d (the first document; None when there is none), docs (all of them, in
order), and over any part of a document, whatever its depth:
  find(x, **fields)     the objects whose fields have these values (key=value, any order)
  has(x, **fields)      whether there is one; count(x, **fields): how many
  values(x, key)        every value of `key`, in document order
  match(x, key, regex)  whether some value of `key` is a string that regex matches
                        (re.search: anchor it with ^ for a prefix)
A file that is not JSON, or an expression that is not Python, is status 2 with one line
naming it (with `has`, a missing key or index is merely false).
"""
import json
import re
import sys


def load(path):
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    dec = json.JSONDecoder()
    docs, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return docs
        try:
            value, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            print(f"jsonq: {path}: not JSON at line {e.lineno}: {e.msg}", file=sys.stderr)
            sys.exit(2)
        docs.append(value)


def walk(x):
    yield x
    if isinstance(x, dict):
        for v in x.values():
            yield from walk(v)
    elif isinstance(x, list):
        for v in x:
            yield from walk(v)


def find(x, **fields):
    return [o for o in walk(x)
            if isinstance(o, dict) and all(k in o and o[k] == v for k, v in fields.items())]


def has(x, **fields):
    return bool(find(x, **fields))


def count(x, **fields):
    return len(find(x, **fields))


def values(x, key):
    return [o[key] for o in walk(x) if isinstance(o, dict) and key in o]


def match(x, key, regex):
    return any(isinstance(v, str) and re.search(regex, v) for v in values(x, key))


def get(x, path):
    for name, index in re.findall(r"\.([^.\[\]]+)|\[(-?\d+)\]", path):
        if name:
            if not isinstance(x, dict) or name not in x:
                raise KeyError(path)
            x = x[name]
        else:
            if not isinstance(x, list) or not -len(x) <= int(index) < len(x):
                raise KeyError(path)
            x = x[int(index)]
    return x


def show(v):
    print(v if isinstance(v, str) else json.dumps(v, separators=(",", ":")))


def main(argv):
    if len(argv) != 4 or argv[1] not in ("get", "eval", "has", "select"):
        sys.exit("usage: jsonq.py get|eval|has|select FILE PATH|EXPR")
    docs = load(argv[2])
    if argv[1] == "select":
        for doc in docs:
            env = {"d": doc, "docs": docs, "find": find, "has": has, "count": count,
                   "values": values, "match": match, "get": get}
            try:
                keep = eval(argv[3], env)  # the test's own expression
            except (KeyError, IndexError, TypeError, ValueError):
                keep = False
            if keep:
                show(doc)
        return 0
    d = docs[0] if docs else None
    if argv[1] == "get":
        try:
            show(get(d, argv[3]))
        except KeyError:
            return 1
        return 0
    env = {"d": d, "docs": docs, "find": find, "has": has, "count": count,
           "values": values, "match": match, "get": get}
    try:
        v = eval(argv[3], env)  # the test's own expression
    except (KeyError, IndexError, TypeError, ValueError) as e:  # the data is not so
        if argv[1] == "has":
            return 1
        print(f"jsonq: {argv[2]}: {argv[3]}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # the expression is wrong
        print(f"jsonq: {argv[2]}: {argv[3]}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if argv[1] == "has":
        return 0 if v else 1
    show(v)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
