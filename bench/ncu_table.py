#!/usr/bin/env python3
"""Condenses an Nsight Compute text report (bench/ncu_profile.sh) into one
markdown row a kernel: duration, DRAM throughput, achieved occupancy,
registers, cycles between a warp's instructions and the stall ncu names as
the largest share of them.

usage: ncu_table.py REPORT.txt TITLE
"""
import re
import sys

HEADER = re.compile(r"^  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context")
METRIC = re.compile(r"^\s+(\S.*?)\s{2,}(\S+)\s+([\d,.]+)\s*$")
STALL = re.compile(r"spends ([\d.]+) cycles being stalled (.+?)\. .*?represents about ([\d.]+)%")
TO_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}


def kernels(lines):
    """(header match, the kernel's lines) for each profiled kernel, in order."""
    current = None
    for line in lines:
        m = HEADER.match(line)
        if m:
            if current:
                yield current
            current = (m, [])
        elif current:
            current[1].append(line)
    if current:
        yield current


def short_stall(reason):
    """'waiting for a scoreboard dependency on a L1TEX (local, ...) operation'
    -> 'waiting for a scoreboard dependency on a L1TEX operation'."""
    return re.sub(r" \(.*?\)", "", reason)


def row(index, header, body):
    metrics = {}
    for line in body:
        m = METRIC.match(line)
        if m:
            name, unit, value = m.group(1).strip(), m.group(2), float(m.group(3).replace(",", ""))
            metrics.setdefault((name, unit), value)

    def get(name, unit=None):
        for (n, u), v in metrics.items():
            if n == name and (unit is None or u == unit):
                return v
        return None

    us = None
    for (n, u), v in metrics.items():
        if n == "Duration" and u in TO_US:
            us = v * TO_US[u]
    text = " ".join(l.strip() for l in body)
    stall = STALL.search(text)
    # "void gemv_kernel<4, 2, 1, 1>(GemvParams)" -> "gemv_kernel<4, 2, 1, 1>"
    name = re.sub(r"^void ", "", header.group(1)).split("(")[0]
    grid = "x".join(header.group(i) for i in (2, 3, 4))
    block = "x".join(header.group(i) for i in (5, 6, 7))
    fmt = lambda v, f="{:.1f}": "" if v is None else f.format(v)
    return "| {} | {} | {} / {} | {} | {} | {} | {} | {} | {} |".format(
        index, name, grid, block, fmt(us, "{:.2f}"), fmt(get("DRAM Throughput", "%")),
        fmt(get("Achieved Occupancy", "%")), fmt(get("Registers Per Thread"), "{:.0f}"),
        fmt(get("Warp Cycles Per Issued Instruction")),
        "" if not stall else "{} ({} cycles, {} %)".format(short_stall(stall.group(2)), stall.group(1), stall.group(3)))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    rows = [row(n, header, body) for n, (header, body) in enumerate(kernels(lines), 1)]
    if not rows:
        sys.exit(f"ncu_table: no profiled kernel in {sys.argv[1]}")
    print(f"ncu, {sys.argv[2]}: one step's launches one by one (clocks as they are)\n")
    print("| # | kernel | grid / block | µs | DRAM % of peak | achieved occupancy % | registers | "
          "cycles between a warp's instructions | largest stall |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
