#!/usr/bin/env python3
"""Print a fenced code block of a Markdown file, so that tests compile and run
the examples of the documentation exactly as written.

    extract_example.py DOC.md [--lang c] [--contains TEXT] [-o OUT]

Prints the first block fenced as ```LANG (default c) whose text contains TEXT
(default: any text), without the fences. Fails (exit 1) when there is none,
or when a fence is left open.
"""

import argparse
import sys


def blocks(lines):
    """Yields (info string, text) of every fenced block."""
    fence = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if fence is None:
            if stripped.startswith("```"):
                fence = (stripped[3:].strip(), number, [])
        elif stripped == "```":
            yield fence[0], "".join(fence[2])
            fence = None
        else:
            fence[2].append(line)
    if fence is not None:
        raise ValueError("the block opened on line %d is never closed" % fence[1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("doc")
    ap.add_argument("--lang", default="c")
    ap.add_argument("--contains", default="")
    ap.add_argument("-o", "--output")
    args = ap.parse_args(argv)

    with open(args.doc, encoding="utf-8") as f:
        lines = f.readlines()
    try:
        for lang, text in blocks(lines):
            if lang == args.lang and args.contains in text:
                if args.output:
                    with open(args.output, "w", encoding="utf-8") as out:
                        out.write(text)
                else:
                    sys.stdout.write(text)
                return 0
    except ValueError as exc:
        print("extract_example: %s: %s" % (args.doc, exc), file=sys.stderr)
        return 1
    print("extract_example: %s: no ```%s block%s" %
          (args.doc, args.lang,
           " containing %r" % args.contains if args.contains else ""),
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
