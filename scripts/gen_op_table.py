#!/usr/bin/env python3
"""Writes the table of native ocl ops into README.md, between the markers

    <!-- BEGIN NATIVE OP TABLE (scripts/gen_op_table.py) -->
    <!-- END NATIVE OP TABLE -->

from what is actually registered for the PrivateUse1 ("ocl") dispatch key in this build
(torch._C._dispatch_get_registrations_for_dispatch_key), grouped by operator, with the
source file of each registration. Run it after adding ops:

    python scripts/gen_op_table.py          # rewrite README.md
    python scripts/gen_op_table.py --check  # exit 1 if README.md is out of date
"""
import argparse
import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- BEGIN NATIVE OP TABLE (scripts/gen_op_table.py) -->"
END = "<!-- END NATIVE OP TABLE -->"


def registrations():
    """{op name: {overload: source file}} of every aten op registered for PrivateUse1."""
    sys.path.insert(0, ROOT)
    import torch  # noqa: E402 - autoloads torch_ocl (this checkout's copy first)

    if not hasattr(torch, "ocl"):
        import torch_ocl  # noqa: F401 - autoload was disabled

    ops = collections.defaultdict(dict)
    for reg in sorted(torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")):
        if not reg.startswith("aten::"):
            continue
        name, _, overload = reg[len("aten::"):].partition(".")
        where = ""
        dump = torch._C._dispatch_dump(reg)
        m = re.search(r"^PrivateUse1: registered at (\S+?):\d+", dump, re.M)
        if m:
            path = m.group(1)
            idx = path.find("csrc/")
            where = path[idx:] if idx >= 0 else os.path.basename(path)
        ops[name][overload or "default"] = where
    return ops


def table(ops):
    n = sum(len(v) for v in ops.values())
    lines = [BEGIN, "",
             f"{len(ops)} operators, {n} overloads registered natively for `ocl` "
             "(generated; every other op runs through the CPU fallback).", "",
             "| operator | overloads | source |", "|---|---|---|"]
    for name in sorted(ops):
        overloads = ", ".join(f"`{o}`" for o in sorted(ops[name]))
        files = ", ".join(sorted({f"`{f}`" for f in ops[name].values() if f})) or ""
        lines.append(f"| `{name}` | {overloads} | {files} |")
    lines += ["", END]
    return "\n".join(lines)


def comparable(text):
    """The table's rows of operators this torch defines. The README is generated with the newest
    torch the project builds against; an older one (the GPU machine's) lacks a few operators, so
    their rows, and the totals line, are left out of the check there."""
    import torch

    rows = []
    for line in text.split(BEGIN, 1)[1].split(END, 1)[0].splitlines():
        m = re.match(r"\| `([^`]+)` \|", line)
        if m and hasattr(torch.ops.aten, m.group(1)):
            rows.append(line)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if README.md is out of date")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = ap.parse_args()
    with open(args.readme, encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit(f"error: {args.readme} lacks the markers {BEGIN!r} ... {END!r}")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + table(registrations()) + tail
    if args.check:
        if new != text and comparable(new) != comparable(text):
            sys.exit("README.md's op table is out of date: run python scripts/gen_op_table.py")
        return
    if new != text:
        with open(args.readme, "w", encoding="utf-8") as f:
            f.write(new)
        print(f"updated {args.readme}")
    else:
        print(f"{args.readme} is up to date")


if __name__ == "__main__":
    main()
