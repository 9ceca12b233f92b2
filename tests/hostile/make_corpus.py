"""Generate a corpus of hostile and malformed "CSV" uploads.

Every file is generated (seeded), never stored: the test suite writes the
corpus into a temporary folder once per session.  Each file name starts with
its category (``<category>__<nnn>-<variant>.<ext>``); :func:`label` reads it
back.  The size-limit files are sized from the limit the core reads at call
time (``VARIMP_MAX_UPLOAD_BYTES``, else the server's default in ``pages._server.limits``).

Usage::

    python tests/hostile/make_corpus.py OUTDIR      # writes the files, prints counts

or, from Python, ``generate(path) -> list[Path]``.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import random
import struct
import sys
import zipfile
from collections import Counter
from pathlib import Path

__all__ = ["CATEGORIES", "generate", "label", "upload_limit"]

SEED = 20130605  # any fixed number: the corpus is the same on every run

#: Every category, in the order the files are generated.
CATEGORIES = (
    "control", "empty", "whitespace", "headers-only", "binary-random", "binary-magic",
    "utf16", "latin1", "utf8-bom", "line-endings", "wide", "long-line", "size-limit",
    "quoted-newlines", "duplicate-headers", "html", "csv-injection", "special-numbers",
    "single-row", "single-class", "identical-columns", "many-levels", "zip-bomb",
    "nested-quotes", "nul-bytes", "long-header", "unicode-headers", "number-formats",
    "semicolon", "tab", "ragged", "trailing-delimiter", "one-column", "no-target",
    "excel", "mutated",
)


def upload_limit() -> int:
    """The server's upload size limit in bytes, read now (not at import)."""
    from pages._server.limits import max_upload_bytes

    return max_upload_bytes()


def label(path) -> str:
    """The category of a generated file (the part of its name before ``__``)."""
    return Path(path).name.split("__", 1)[0]


# -- building blocks ------------------------------------------------------------------
def _rows(rng: random.Random, n: int, header=("a", "b", "c", "y"), sep=",", eol="\n") -> str:
    """A plain, valid table: two discrete inputs, one float input, a binary target."""
    lines = [sep.join(header)]
    for _ in range(n):
        a, b = rng.randrange(3), rng.choice("xyz")
        c = rng.uniform(-5, 5)
        y = (a + (b == "x") + (c > 0)) % 2
        lines.append(sep.join([str(a), b, f"{c:.3f}", str(y)][:len(header)]))
    return eol.join(lines) + eol


def _table(header, rows, sep=",", eol="\n") -> str:
    return eol.join(sep.join(map(str, r)) for r in [header, *rows]) + eol


def _sized_csv(rng: random.Random, size: int) -> bytes:
    """A valid table of exactly ``size`` bytes, with long text cells (so few rows)."""
    words = ["".join(rng.choice("abcdefghij") for _ in range(1000)) for _ in range(4)]
    body = bytearray(b"a,b,text,y\n")
    while size - len(body) > 2100:
        a, b = rng.randrange(10), rng.randrange(100, 999)
        body += f"{a},{b},{rng.choice(words)},{(a + b) % 2}\n".encode()
    # One last row whose text fills the file exactly.
    fill = size - len(body) - len("1,100,,0\n")
    body += f"1,100,{'k' * fill},0\n".encode()
    assert len(body) == size, (len(body), size)
    return bytes(body)


def _zip(entries: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _xlsx() -> bytes:
    """A minimal Office Open XML workbook with one sheet (what Excel saves as .xlsx)."""
    ct = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
          '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
          'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
          '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats'
          '-officedocument.spreadsheetml.sheet.main+xml"/></Types>')
    sheet = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
             'openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
             + "".join(f'<row r="{i}"><c r="A{i}"><v>{i}</v></c><c r="B{i}"><v>{i % 2}</v>'
                       f'</c></row>' for i in range(1, 50))
             + "</sheetData></worksheet>")
    return _zip({"[Content_Types].xml": ct.encode(),
                 "_rels/.rels": b'<?xml version="1.0"?><Relationships/>',
                 "xl/workbook.xml": b'<?xml version="1.0"?><workbook/>',
                 "xl/worksheets/sheet1.xml": sheet.encode()})


def _ole2(rng: random.Random) -> bytes:
    """The start of a legacy .xls (OLE2 compound file) followed by sectors of junk."""
    header = bytes.fromhex("d0cf11e0a1b11ae1") + b"\x00" * 16 + struct.pack("<HH", 0x3E, 3)
    return header + b"\xfe\xff" + rng.randbytes(4096)


# -- the corpus -----------------------------------------------------------------------
def _cases(rng: random.Random, limit: int):
    """Yield ``(category, variant, extension, bytes)``."""
    ok = _rows(rng, 60)

    # Normal files, so the corpus shows what acceptance looks like.
    yield "control", "plain", "csv", ok.encode()
    yield "control", "crlf", "csv", ok.replace("\n", "\r\n").encode()
    yield "control", "quoted", "csv", _table(
        ['"a"', '"b"', '"y"'], [[f'"{i % 3}"', f'"t{i % 4}"', f'"{i % 2}"'] for i in range(40)]
    ).encode()
    yield "control", "regression", "csv", _table(
        ["x1", "x2", "y"], [[i % 7, round(rng.random(), 4), round(rng.gauss(0, 1), 5)]
                            for i in range(200)]).encode()
    yield "control", "bool", "csv", _table(
        ["flag", "n", "y"], [[rng.choice(["True", "False"]), i % 5, rng.choice("ab")]
                             for i in range(50)]).encode()

    for i, data in enumerate([b"", b"\n", b"\r\n", b"\n\n\n", b"\x00", b"\xef\xbb\xbf",
                              codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE]):
        yield "empty", f"v{i}", "csv", data

    for i, data in enumerate([" ", "   \n  \n", "\t\t\t", " \r\n\t\r\n ", "\u00a0\u3000\n",
                              "\n" * 1000 + " " * 1000, ",,,\n,,,\n", ";;\n;;\n"]):
        yield "whitespace", f"v{i}", "csv", data.encode("utf-8")

    for i, data in enumerate(["a,b,y", "a,b,y\n", "a;b;y\r\n", "y\n", "a,b,y\n\n\n   \n",
                              '"a","b","y"\n']):
        yield "headers-only", f"v{i}", "csv", data.encode()

    for size in (1, 2, 7, 64, 512, 4096, 65536, 300_000):
        yield "binary-random", f"{size}b", "csv", rng.randbytes(size)
    # High bytes only (no NUL, no control characters): not valid UTF-8.
    yield "binary-random", "high-bytes", "csv", bytes(rng.randrange(0x80, 0x100)
                                                      for _ in range(5000))

    magics = {
        "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "elf": b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8,
        "pdf": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nstream\n",
        "gif": b"GIF89a\x01\x00\x01\x00",
        "jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00",
        "exe": b"MZ\x90\x00\x03\x00\x00\x00",
        "sqlite": b"SQLite format 3\x00",
        "parquet": b"PAR1\x15\x04",
    }
    for name, magic in magics.items():
        yield "binary-magic", f"{name}-junk", "csv", magic + rng.randbytes(2000)
        yield "binary-magic", f"{name}-text", "csv", magic + ok.encode()

    text16 = "a,b,nom,y\n" + "".join(f"{i % 3},{i % 5},caf\u00e9{i % 4},{i % 2}\n"
                                     for i in range(40))
    for enc, bom in (("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE)):
        body = text16.encode(enc)
        yield "utf16", f"{enc}-bom", "csv", bom + body
        yield "utf16", f"{enc}-nobom", "csv", body
        yield "utf16", f"{enc}-bom-semicolon", "csv", bom + text16.replace(",", ";").encode(enc)
        yield "utf16", f"{enc}-nobom-crlf", "csv", text16.replace("\n", "\r\n").encode(enc)
        yield "utf16", f"{enc}-bom-odd-length", "csv", (bom + body)[:-1]
    yield "utf16", "utf-16-bom-wrong-order", "csv", codecs.BOM_UTF16_LE + text16.encode(
        "utf-16-be")

    people = ["Ren\u00e9e", "Jos\u00e9", "M\u00fcller", "Fran\u00e7ois"]
    towns = ["Z\u00fcrich", "K\u00f8benhavn", "S\u00e3o Paulo"]
    latin = "nom,ville,\u00e2ge,y\n" + "".join(
        f"{rng.choice(people)},{rng.choice(towns)},{20 + i % 9},{i % 2}\n" for i in range(50))
    yield "latin1", "latin-1", "csv", latin.encode("latin-1")
    yield "latin1", "cp1252-euro", "csv", latin.replace("\u00e2ge", "prix \u20ac").encode("cp1252")
    yield "latin1", "latin-1-semicolon", "csv", latin.replace(",", ";").encode("latin-1")
    yield "latin1", "cp1252-undefined-byte", "csv", latin.encode("latin-1") + b"x,\x81,1,0\n"
    yield "latin1", "mixed-utf8-latin1", "csv", latin.encode("utf-8") + "caf\u00e9,x,1,0\n".encode(
        "latin-1")

    bom8 = codecs.BOM_UTF8
    yield "utf8-bom", "comma", "csv", bom8 + ok.encode()
    yield "utf8-bom", "semicolon", "csv", bom8 + ok.replace(",", ";").encode()
    yield "utf8-bom", "double-bom", "csv", bom8 + bom8 + ok.encode()
    yield "utf8-bom", "bom-in-header", "csv", ok.replace("b,", "\ufeffb,", 1).encode()

    small = _rows(rng, 30).splitlines()
    for name, eols in (("lf", ["\n"]), ("crlf", ["\r\n"]), ("cr", ["\r"]),
                       ("mixed", ["\n", "\r\n", "\r"]), ("lfcr", ["\n\r"]),
                       ("crcrlf", ["\r\r\n"])):
        text = "".join(line + eols[i % len(eols)] for i, line in enumerate(small))
        yield "line-endings", name, "csv", text.encode()
    yield "line-endings", "no-final-newline", "csv", "\n".join(small).encode()
    yield "line-endings", "unicode-separators", "csv", "\u2028".join(small).encode()

    for n_cols, n_rows in ((100_000, 1), (100_000, 3), (20_000, 10), (1_001, 5), (1_000, 5)):
        header = ",".join(f"c{j}" for j in range(n_cols))
        rows = "\n".join(",".join(str((i + j) % 3) for j in range(n_cols)) for i in range(n_rows))
        yield "wide", f"{n_cols}x{n_rows}", "csv", (header + "\n" + rows + "\n").encode()

    yield "long-line", "10MB-one-line", "csv", b"1," * (5 * 1024 * 1024)
    yield "long-line", "one-line-under-limit", "csv", (b"x," * ((limit - 10) // 2))[:limit - 10]
    yield "long-line", "4MB-one-cell", "csv", b"a,y\n" + b"z" * (4 * 1024 * 1024) + b",1\n"
    yield "long-line", "200kB-cell", "csv", (
        "a,y\n" + "q" * 200_000 + ",1\n" + "r,0\n").encode()

    yield "size-limit", "limit-minus-1", "csv", _sized_csv(rng, limit - 1)
    yield "size-limit", "exactly-limit", "csv", _sized_csv(rng, limit)
    yield "size-limit", "limit-plus-1", "csv", _sized_csv(rng, limit + 1)
    yield "size-limit", "limit-plus-1kB", "csv", _sized_csv(rng, limit + 1024)
    yield "size-limit", "twice-limit", "csv", _sized_csv(rng, 2 * limit)

    nl_rows = [[f'"line one\nline two {i}"', i % 3, i % 2] for i in range(30)]
    yield "quoted-newlines", "lf", "csv", _table(["note", "a", "y"], nl_rows).encode()
    yield "quoted-newlines", "crlf", "csv", _table(
        ["note", "a", "y"], [[r[0].replace("\n", "\r\n"), *r[1:]] for r in nl_rows],
        eol="\r\n").encode()
    yield "quoted-newlines", "in-header", "csv", _table(['"two\nlines"', "a", "y"],
                                                         nl_rows).encode()
    yield "quoted-newlines", "unterminated", "csv", b'a,b,y\n1,"never closed,0\n2,3,1\n'
    yield "quoted-newlines", "many-in-one-cell", "csv", (
        'a,y\n"' + "\n" * 5000 + '",1\nb,0\n').encode()

    for i, header in enumerate([["a", "a", "y"], ["a", " a", "y"], ["A", "a", "y"],
                                ["", "", "y"], ["a", "b", "a"], [" ", "  ", "y"],
                                ["y", "y", "y"], ["a", "b", "y", "b", "y"]]):
        rows = [[j % 3 for _ in header[:-1]] + [j % 2] for j in range(20)]
        yield "duplicate-headers", f"v{i}", "csv", _table(header, rows).encode()

    xss = ["<script>alert(1)</script>", '<img src=x onerror="alert(1)">',
           '"><svg onload=alert(1)>', "javascript:alert(document.cookie)",
           "<iframe src=//evil.example>", "{{constructor.constructor('alert(1)')()}}"]
    for i, x in enumerate(xss):
        q = '"' + x.replace('"', '""') + '"'
        yield "html", f"header-{i}", "csv", _table(
            [q, "b", "y"], [[j % 3, j % 2, j % 2] for j in range(20)]).encode()
        yield "html", f"cells-{i}", "csv", _table(
            ["a", "b", "y"], [[q if j % 2 else "plain", j % 3, q if j % 3 else "t"]
                              for j in range(20)]).encode()

    inject = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(1+1)*cmd|' /C calc'!A0",
              "=HYPERLINK(\"http://evil.example\",\"x\")", "\t=1+1", "\r=1+1", "-1"]
    for i, x in enumerate(inject):
        q = '"' + x.replace('"', '""') + '"'
        yield "csv-injection", f"header-{i}", "csv", _table(
            [q, "b", "y"], [[j % 3, j % 2, (j // 2) % 2] for j in range(24)]).encode()
        yield "csv-injection", f"cells-{i}", "csv", _table(
            ["a", "b", "y"], [[q if j % 2 else "ok", j % 3, q if j % 3 else "z"]
                              for j in range(24)]).encode()

    specials = {
        "nan": "NaN", "nan-lower": "nan", "inf": "inf", "neg-inf": "-inf",
        "infinity": "Infinity", "huge": "1e308", "neg-huge": "-1e308",
        "subnormal": "1e-320", "overflow": "1e400", "bigint": str(10 ** 30),
        "neg-bigint": str(-(10 ** 40)), "empty-cell": "", "na": "NA", "null": "null",
    }
    for name, v in specials.items():
        rows = [[v if j % 5 == 0 else round(rng.uniform(-3, 3), 3), j % 4, j % 2]
                for j in range(40)]
        yield "special-numbers", name, "csv", _table(["x", "a", "y"], rows).encode()
    yield "special-numbers", "huge-both-signs", "csv", _table(
        ["x", "y"], [[("1e308", "-1e308", "1e-320", "0")[j % 4], j % 2] for j in range(40)]
    ).encode()
    yield "special-numbers", "huge-target", "csv", _table(
        ["x", "y"], [[j % 3, ("1e308", "-1e308", "5e307")[j % 3] if j < 30 else j]
                     for j in range(60)]).encode()
    yield "special-numbers", "huge-all-distinct", "csv", _table(
        ["x", "y"], [[f"{(-1) ** j * (j + 1)}e306", j % 2] for j in range(60)]).encode()
    yield "special-numbers", "huge-binned", "csv", _table(
        ["x", "y"], [[("1e308", "-1e308")[j] if j < 2 else f"{(j - 20) * 5}e305", j % 2]
                     for j in range(40)]).encode()
    yield "special-numbers", "nan-target", "csv", _table(
        ["x", "y"], [[j % 3, "nan" if j == 7 else j % 2] for j in range(30)]).encode()

    yield "single-row", "three-cols", "csv", b"a,b,y\n1,2,0\n"
    yield "single-row", "text", "csv", b"a,b,y\nx,y,z\n"
    yield "single-row", "two-rows", "csv", b"a,y\n1,0\n2,1\n"

    yield "single-class", "numeric", "csv", _table(
        ["a", "b", "y"], [[j % 3, j % 5, 1] for j in range(30)]).encode()
    yield "single-class", "text", "csv", _table(
        ["a", "b", "y"], [[j % 3, j % 5, "yes"] for j in range(30)]).encode()
    yield "single-class", "float", "csv", _table(
        ["a", "y"], [[j % 3, "0.5"] for j in range(30)]).encode()

    yield "identical-columns", "all-same-values", "csv", _table(
        ["a", "b", "y"], [[1, 1, 1]] * 30).encode()
    yield "identical-columns", "copies", "csv", _table(
        ["a", "b", "c", "y"], [[j % 4] * 3 + [j % 2] for j in range(40)]).encode()
    yield "identical-columns", "constant-inputs", "csv", _table(
        ["a", "b", "y"], [["k", 0, j % 2] for j in range(40)]).encode()

    n = 10_000
    yield "many-levels", "text-target", "csv", _table(
        ["a", "y"], [[j % 3, f"level{j}"] for j in range(n)]).encode()
    yield "many-levels", "int-target", "csv", _table(
        ["a", "y"], [[j % 3, j] for j in range(n)]).encode()
    yield "many-levels", "text-input", "csv", _table(
        ["id", "a", "y"], [[f"id{j:05d}", j % 3, j % 2] for j in range(n)]).encode()
    yield "many-levels", "float-input", "csv", _table(
        ["x", "y"], [[rng.random(), j % 2] for j in range(n)]).encode()

    big = b"0" * (10 * 1024 * 1024)
    yield "zip-bomb", "zip-10MB-zeros", "csv", _zip({"data.csv": big})
    yield "zip-bomb", "gzip-10MB-zeros", "csv", gzip.compress(big, mtime=0)
    yield "zip-bomb", "bzip2-10MB-zeros", "csv", bz2.compress(big)
    yield "zip-bomb", "xz-10MB-zeros", "csv", lzma.compress(big)
    yield "zip-bomb", "nested-zip", "csv", _zip({"inner.zip": _zip({"data.csv": big})})
    yield "zip-bomb", "zip-of-csv", "csv", _zip({"data.csv": ok.encode()})
    yield "zip-bomb", "gzip-of-csv", "csv", gzip.compress(ok.encode(), mtime=0)
    yield "zip-bomb", "zip-stored", "csv", _zip({"data.csv": ok.encode()}, zipfile.ZIP_STORED)

    yield "nested-quotes", "escaped", "csv", b'a,y\n"""x""",1\n"y""z",0\n'
    yield "nested-quotes", "deep-even", "csv", ("a,y\n" + '"' * 2000 + ",1\nq,0\n").encode()
    yield "nested-quotes", "deep-odd", "csv", ("a,y\n" + '"' * 2001 + ",1\nq,0\n").encode()
    yield "nested-quotes", "quote-in-unquoted", "csv", b'a,y\nab"c,1\nd"e"f,0\n'
    yield "nested-quotes", "quote-after-close", "csv", b'a,y\n"ab"c,1\n"d"e,0\n'
    yield "nested-quotes", "single-quotes", "csv", b"a,y\n'x,y',1\n'z',0\n"
    yield "nested-quotes", "header-only-quote", "csv", b'"\n1\n'

    for i, data in enumerate([b"a,b,y\n1,2\x00,0\n3,4,1\n", b"a,\x00b,y\n1,2,0\n3,4,1\n",
                              ok.encode() + b"\x00", b"a,y\n" + b"\x00" * 1000 + b",1\n",
                              ok.encode()[:100] + b"\x00" + ok.encode()[100:]]):
        yield "nul-bytes", f"v{i}", "csv", data

    for size in (100_000, 131_072, 200_000):
        yield "long-header", f"{size}", "csv", _table(
            ["h" * size, "b", "y"], [[j % 3, j % 2, j % 2] for j in range(20)]).encode()
    yield "long-header", "long-target", "csv", _table(
        ["a", "t" * 100_000], [[j % 3, 1] for j in range(20)]).encode()

    names = {
        "combining": "Z\u0351\u036b\u0343\u036a\u0302a\u0310l\u0308g\u0334o" * 12,
        "rtl-override": "\u202eexe.txt",
        "zero-width": "a\u200bb\u200dc\u2060",
        "emoji": "\U0001f525\U0001f4a9 \U0001f1eb\U0001f1f7",
        "rtl-script": "\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",
        "control-chars": "bell\x07tab\x1b[31m",
        "lone-surrogate-bytes": None,
    }
    for name, h in names.items():
        if h is None:
            data = b"a\xed\xa0\x80b,c,y\n" + b"".join(f"{j % 3},{j % 2},{j % 2}\n".encode()
                                                      for j in range(20))
        else:
            data = _table([f'"{h}"', "c", "y"], [[j % 3, j % 2, j % 2] for j in range(20)]
                          ).encode()
        yield "unicode-headers", name, "csv", data

    vals = [1234.5 + 1000 * j for j in range(30)]
    yield "number-formats", "quoted-thousands", "csv", _table(
        ["x", "y"], [[f'"{v:,.1f}"', j % 2] for j, v in enumerate(vals)]).encode()
    yield "number-formats", "decimal-comma-semicolon", "csv", _table(
        ["x", "y"], [[f"{v:,.2f}".replace(",", " ").replace(".", ","), j % 2]
                     for j, v in enumerate(vals)], sep=";").encode()
    yield "number-formats", "european", "csv", _table(
        ["x", "y"], [[f"{v:,.2f}".translate(str.maketrans(",.", ".,")), j % 2]
                     for j, v in enumerate(vals)], sep=";").encode()
    yield "number-formats", "swiss-apostrophe", "csv", _table(
        ["x", "y"], [[f"{v:,.0f}".replace(",", "'"), j % 2] for j, v in enumerate(vals)]).encode()
    yield "number-formats", "unquoted-decimal-comma", "csv", _table(
        ["x", "y"], [[f"{v:.2f}".replace(".", ","), j % 2] for j, v in enumerate(vals)]).encode()
    yield "number-formats", "percent-currency", "csv", _table(
        ["p", "c", "y"], [[f"{j}%", f"${j}.00", j % 2] for j in range(30)]).encode()

    yield "semicolon", "plain", "csv", ok.replace(",", ";").encode()
    yield "semicolon", "with-commas-in-text", "csv", _table(
        ["a", "b", "y"], [[f"x,{j % 3}", j % 4, j % 2] for j in range(30)], sep=";").encode()
    yield "semicolon", "excel-sep-line", "csv", ("sep=;\n" + ok.replace(",", ";")).encode()

    yield "tab", "plain", "tsv", ok.replace(",", "\t").encode()
    yield "tab", "spaces-in-text", "csv", _table(
        ["a b", "c d", "y"], [[f"v {j % 3}", j % 4, j % 2] for j in range(30)], sep="\t").encode()
    yield "tab", "pipe", "csv", ok.replace(",", "|").encode()
    yield "tab", "space-aligned", "txt", _table(
        ["a", "b", "y"], [[j % 3, j % 4, j % 2] for j in range(30)], sep="   ").encode()

    good = _rows(rng, 30).splitlines()
    yield "ragged", "long-row", "csv", "\n".join(good[:10] + [good[10] + ",extra"] + good[11:]
                                                ).encode()
    yield "ragged", "short-row", "csv", "\n".join(good[:10] + ["1,x"] + good[11:]).encode()
    yield "ragged", "short-last-row", "csv", "\n".join(good + ["1"]).encode()
    yield "ragged", "short-header", "csv", "\n".join(["a,b"] + good[1:]).encode()
    yield "ragged", "every-row-different", "csv", "\n".join(
        ["a,b,y"] + [",".join("1" * (1 + j % 5)) for j in range(30)]).encode()

    yield "trailing-delimiter", "every-line", "csv", "".join(
        line + ",\n" for line in good).encode()
    yield "trailing-delimiter", "data-only", "csv", "\n".join(
        good[:1] + [line + "," for line in good[1:]]).encode()
    yield "trailing-delimiter", "semicolon", "csv", "".join(
        line.replace(",", ";") + ";\n" for line in good).encode()

    yield "one-column", "numbers", "csv", _table(["y"], [[j % 2] for j in range(30)]).encode()
    yield "one-column", "text", "csv", _table(["y"], [["ab"[j % 2]] for j in range(30)]).encode()
    yield "one-column", "floats", "csv", _table(["y"], [[rng.random()] for _ in range(30)]
                                                ).encode()

    yield "no-target", "all-continuous", "csv", _table(
        ["u", "v", "w"], [[rng.random(), rng.random(), rng.random()] for _ in range(60)]).encode()
    yield "no-target", "ids", "csv", _table(
        ["id", "name"], [[j, f"n{j}"] for j in range(60)]).encode()
    yield "no-target", "dates", "csv", _table(
        ["a", "when"], [[j % 3, f"2024-01-{1 + j % 28:02d}T{j % 24:02d}:00"] for j in range(60)]
    ).encode()

    yield "excel", "xlsx", "xlsx", _xlsx()
    yield "excel", "xlsx-renamed", "csv", _xlsx()
    yield "excel", "xls-ole2", "csv", _ole2(rng)
    yield "excel", "unicode-text-export", "txt", codecs.BOM_UTF16_LE + ok.replace(
        ",", "\t").replace("\n", "\r\n").encode("utf-16-le")
    yield "excel", "html-table-as-xls", "csv", (
        "<html><body><table><tr><td>a</td><td>y</td></tr><tr><td>1</td><td>0</td></tr>"
        "</table></body></html>").encode()
    yield "excel", "spreadsheetml-2003", "csv", (
        '<?xml version="1.0"?><?mso-application progid="Excel.Sheet"?><Workbook '
        'xmlns="urn:schemas-microsoft-com:office:spreadsheet"><Worksheet ss:Name="S">'
        "<Table><Row><Cell><Data>a</Data></Cell></Row></Table></Worksheet></Workbook>").encode()

    # Random byte-level damage to a valid file: flips, cuts, splices of quotes and NULs.
    base = _rows(rng, 40).encode()
    for i in range(24):
        data = bytearray(base)
        for _ in range(1 + i % 6):
            op, pos = rng.randrange(5), rng.randrange(len(data))
            if op == 0:
                data[pos] = rng.getrandbits(8)
            elif op == 1:
                data[pos:pos] = rng.choice([b'"', b",", b"\n", b"\r", b"\x00", b";", b"\t"])
            elif op == 2:
                del data[pos:pos + rng.randrange(1, 40)]
            elif op == 3:
                data = data[:pos]
            else:
                data[pos:pos] = rng.choice(['"\u00e9"', "\u202e", "\ufeff", "=1+1"]).encode()
        yield "mutated", f"m{i:02d}", "csv", bytes(data)


def generate(directory) -> list[Path]:
    """Write the corpus into ``directory`` (created if needed) and return the paths.

    The category of each file is ``label(path)``; the same files (same bytes)
    are written on every call, except that the size-limit files follow the
    limit the core reads at call time.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    paths = []
    for i, (category, variant, ext, data) in enumerate(_cases(rng, upload_limit())):
        assert category in CATEGORIES, category
        path = out / f"{category}__{i:03d}-{variant}.{ext}"
        path.write_bytes(data)
        paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/hostile/make_corpus.py OUTDIR")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    files = generate(sys.argv[1])
    for category, count in Counter(label(p) for p in files).items():
        print(f"{category:20s} {count}")
    print(f"{'total':20s} {len(files)}")
