#!/usr/bin/env python3
"""Checks the size habits of CONTRIBUTING.md: no source file under lib/,
tools/ or runtime/ longer than 1,000 lines and no function longer than 200.

    scripts/check_sizes.py [--max-file N] [--max-function N] [PATH...]

Functions are found by their braces in clang-formatted C and C++ (LLVM
style): a `{` whose preceding declaration has a parameter list, outside any
other function, opens one; lambdas and local classes count towards the
function that holds them. Exit status 1 lists every file or function over
its limit, with its location.
"""
import argparse
import pathlib
import re
import sys

SOURCES = (".c", ".cpp", ".h", ".hpp", ".inc")


def strip(text):
    """The text with comments, string and character literals blanked (newlines
    kept, so that offsets keep their line numbers)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(" ")  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, number of lines) of every function in `text`."""
    code = strip(text)
    # Preprocessor lines never open scopes.
    code = re.sub(r"(?m)^[ \t]*#.*(\\\n.*)*$", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    stack = []  # (kind, start offset, name)
    last = 0  # where the current declaration began
    found = []
    for m in re.finditer(r"[{};]", code):
        ch, pos = m.group(0), m.start()
        if ch == ";":
            last = pos + 1
            continue
        if ch == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "function":
                    first = code.count("\n", 0, start) + 1
                    lastline = code.count("\n", 0, pos) + 1
                    found.append((name, first, lastline - first + 1))
            last = pos + 1
            continue
        head = code[last:pos]
        inside = any(k == "function" for k, _, _ in stack)
        words = head.split()
        if inside:
            kind = "block"
        elif re.search(r"\bnamespace\b", head) or re.search(r'\bextern\b\s*$', head.strip()):
            kind = "scope"
        elif re.match(r"\s*(template\s*<.*>\s*)?(class|struct|union|enum)\b", head, re.S) and "(" not in head.split(":")[0]:
            kind = "scope"
        elif ")" in head and not re.search(r"=\s*$", head):
            kind = "function"
        else:
            kind = "block"
        name = ""
        if kind == "function":
            sig = head[: head.find("(")] if "(" in head else head
            parts = sig.split()
            name = parts[-1] if parts else "?"
        stack.append((kind, pos, name))
        last = pos + 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-file", type=int, default=1000)
    ap.add_argument("--max-function", type=int, default=200)
    ap.add_argument("paths", nargs="*", default=["lib", "tools", "runtime"])
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    bad = []
    for p in args.paths:
        base = (root / p) if not pathlib.Path(p).is_absolute() else pathlib.Path(p)
        files = [base] if base.is_file() else sorted(base.rglob("*"))
        for f in files:
            if f.suffix not in SOURCES or not f.is_file():
                continue
            text = f.read_text(errors="replace")
            rel = f.relative_to(root) if f.is_relative_to(root) else f
            lines = text.count("\n")
            if lines > args.max_file:
                bad.append(f"{rel}: {lines} lines (at most {args.max_file})")
            for name, line, length in functions(text):
                if length > args.max_function:
                    bad.append(f"{rel}:{line}: function '{name}' has {length} "
                               f"lines (at most {args.max_function})")
    for b in bad:
        print(b)
    sys.stdout.flush()
    if bad:
        print(f"check_sizes: {len(bad)} over the limits; split them "
              "(CONTRIBUTING.md, 'Size')", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
