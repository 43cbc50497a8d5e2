#!/usr/bin/env python3
"""Checks an HTML report of `sia-ctl plot` (tests/e2e/plot_*.sh).

  plot_check.py svg REPORT.html N        every <svg> is well-formed XML, there are N of them,
                                         each with a title, both axes, a data mark (or says
                                         "no data" where allowed with --allow-empty K) and
                                         no NaN or infinity in any coordinate
  plot_check.py png SHOT.png MIN_FRACTION  the screenshot is not blank: at least that
                                         fraction of its pixels is not white, and some are
                                         in colour (the data)
  plot_check.py dom DOM.html N           the DOM the browser built holds N chart <svg>s
Exit status 0 when the check passes, 1 (with the reason on stderr) otherwise.
"""
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG_NS = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
COORD_ATTRS = ("x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "width", "height")


def fail(msg):
    print("plot_check: " + msg, file=sys.stderr)
    sys.exit(1)


def check_svg(path, want, allow_empty):
    html = open(path, encoding="utf-8").read()
    for bad in ("<script", "src=", "href=", "@import", "url("):
        if bad in html:
            fail(f"{path}: the page refers to something outside it ({bad!r})")
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    if len(svgs) != want:
        fail(f"{path}: expected {want} charts, found {len(svgs)}")
    empty = 0
    for i, text in enumerate(svgs):
        try:
            root = ET.fromstring(text)
        except ET.ParseError as e:
            fail(f"{path}: chart {i + 1}: not well-formed XML: {e}")
        if root.tag != SVG_NS + "svg":
            fail(f"{path}: chart {i + 1}: root is {root.tag}, not an SVG element")
        title = root.find(SVG_NS + "title")
        name = title.text if title is not None else ""
        if not name:
            fail(f"{path}: chart {i + 1}: no title")
        classes = [el.get("class", "") for el in root.iter()]
        for axis in ("axis x", "axis y"):
            if axis not in classes:
                fail(f"{path}: chart {name!r}: no {axis}")
        axis_texts = [t.text for g in root.iter(SVG_NS + "g")
                      if g.get("class", "").startswith("axis") for t in g.iter(SVG_NS + "text")]
        if len([t for t in axis_texts if t]) < 4:
            fail(f"{path}: chart {name!r}: axes without tick labels or titles")
        marks = [c for c in classes if c.split(" ")[0] == "mark"]
        if not marks:
            if "nodata" in classes:
                empty += 1
            else:
                fail(f"{path}: chart {name!r}: no data marks and no 'no data' note")
        for el in root.iter():
            for attr in COORD_ATTRS:
                v = el.get(attr)
                if v is not None and not NUMBER.match(v):
                    fail(f"{path}: chart {name!r}: {el.tag} {attr}={v!r} is not a number")
            d = el.get("d")
            if d is not None:
                if not re.fullmatch(r"[MLHVZ0-9.,\- ]+", d) or re.search(r"nan|inf", d, re.I):
                    fail(f"{path}: chart {name!r}: path data {d[:60]!r} is not plain numbers")
    if empty > allow_empty:
        fail(f"{path}: {empty} charts say 'no data' (at most {allow_empty} may)")
    print(f"{path}: {len(svgs)} charts, well-formed, {empty} without data")


def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG file")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                fail(f"{path}: unexpected PNG format (depth {depth}, colour type {ctype})")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def check_png(path, min_fraction):
    width, height, bpp, rows = png_pixels(path)
    non_white = coloured = 0
    for line in rows:
        for x in range(0, len(line), bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r < 240 or g < 240 or b < 240:
                non_white += 1
            if max(r, g, b) - min(r, g, b) > 60:
                coloured += 1
    total = width * height
    frac = non_white / total
    print(f"{path}: {width}x{height}, {100 * frac:.1f}% not white, "
          f"{100 * coloured / total:.1f}% in colour")
    if frac < min_fraction:
        fail(f"{path}: only {100 * frac:.2f}% of the pixels are not white: blank page?")
    if coloured < 0.001 * total:
        fail(f"{path}: almost no pixel in colour: were the data drawn?")


def check_dom(path, want):
    dom = open(path, encoding="utf-8", errors="replace").read()
    n = len(re.findall(r"<svg\b[^>]*class=\"chart\"", dom))
    if n != want:
        fail(f"{path}: the browser's DOM holds {n} charts, expected {want}")
    print(f"{path}: the browser built {n} charts")


def main():
    if len(sys.argv) < 4:
        fail(__doc__)
    what, path = sys.argv[1], sys.argv[2]
    if what == "svg":
        allow = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--allow-empty" else 0
        check_svg(path, int(sys.argv[3]), allow)
    elif what == "png":
        check_png(path, float(sys.argv[3]))
    elif what == "dom":
        check_dom(path, int(sys.argv[3]))
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
