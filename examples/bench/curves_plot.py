"""Draws the cost-growth curves from `go test -bench` outputs.

    curves_plot.py --out DIR loadtable=FILE sharing=FILE policy=FILE

Each FILE is the output of one curve's benchmark (examples/bench/curves.sh
writes them), possibly with -count > 1: every point is the median of its
runs. Writes DIR/BENCHMARKS-<curve>.png (800x500, log-log, one line per
variant: time per operation and bytes allocated per operation; the policy
plot adds the policy's load time) and prints the medians as a table.
"""

import argparse
import re
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import EngFormatter  # noqa: E402

LINE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$")

# curve -> (benchmark, x label, how to read x, variant order)
CURVES = {
    "loadtable": (
        "BenchmarkLoadTableCurve",
        "LoadTable answer (table metadata grown by snapshots)",
        "answer-B",
        ["direct", "miss", "revalidated", "l2", "l1", "not-modified"],
    ),
    "sharing": (
        "BenchmarkSharingQueryCurve",
        "data files in the shared table",
        "label",
        ["planning=auto", "planning=local"],
    ),
    "policy": (
        "BenchmarkDecideCurve",
        "principals / rules / groups in the policy",
        "label",
        ["regex-rules", "roles-groups", "principals", "rules", "group-rules"],
    ),
}

TITLES = {
    "loadtable": "LoadTable through lakegate, by metadata size",
    "sharing": "Delta Sharing query (POST …/query), by data files",
    "policy": "First policy decision (OPA), by policy size",
}


def parse(path):
    """name -> {metric unit -> [values]} for every benchmark line."""
    runs = defaultdict(lambda: defaultdict(list))
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            name, _, rest = m.groups()
            fields = rest.split()
            for value, unit in zip(fields[0::2], fields[1::2]):
                try:
                    runs[name][unit].append(float(value))
                except ValueError:
                    pass
    return runs


def label_value(label):
    """1k -> 1000, 10000 -> 10000, 10MB -> 1e7."""
    m = re.fullmatch(r"([\d.]+)\s*(k|M|KB|MB|GB)?", label)
    if not m:
        raise ValueError(f"size label {label!r}")
    scale = {None: 1, "k": 1e3, "M": 1e6, "KB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)]
    return float(m.group(1)) * scale


def series(runs, bench, xkind):
    """variant -> sorted [(x, {unit: median})]."""
    out = defaultdict(list)
    for name, metrics in runs.items():
        parts = name.split("/")
        if parts[0] != bench or len(parts) != 3:
            continue
        variant, size = parts[1], parts[2].split("=", 1)[1]
        med = {unit: statistics.median(vals) for unit, vals in metrics.items()}
        x = med[xkind] if xkind in med else label_value(size)
        med["label"] = size
        out[variant].append((x, med))
    for v in out:
        out[v].sort(key=lambda p: p[0])
    return out


def plot(curve, data, out_dir):
    bench, xlabel, _, order = CURVES[curve]
    panels = [("ns/op", "ns/op: time per operation", 1e-9, "s"), ("B/op", "B/op: allocated per operation", 1, "B")]
    if curve == "policy":
        panels.append(("load-ns", "load-ns: loading the policy", 1e-9, "s"))
    fig, axes = plt.subplots(1, len(panels), figsize=(8, 5), dpi=100)
    variants = [v for v in order if v in data] + sorted(v for v in data if v not in order)
    for ax, (unit, title, scale, sym) in zip(axes, panels):
        for v in variants:
            pts = [(x, m[unit] * scale) for x, m in data[v] if unit in m and m[unit] > 0]
            if pts:
                ax.plot(*zip(*pts), marker="o", markersize=3.5, linewidth=1.4, label=v)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        ax.yaxis.set_major_formatter(EngFormatter(unit=sym, places=0))
        ax.xaxis.set_major_formatter(EngFormatter(unit="B" if curve == "loadtable" else "", places=0))
        ax.tick_params(labelsize=7)
        ax.grid(True, which="major", linewidth=0.4, alpha=0.6)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8, frameon=False)
    fig.suptitle(TITLES[curve], fontsize=10)
    fig.supxlabel(xlabel, fontsize=8, y=0.085)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    path = f"{out_dir}/BENCHMARKS-{curve}.png"
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)
    return path


def table(curve, data):
    _, _, _, order = CURVES[curve]
    variants = [v for v in order if v in data] + sorted(v for v in data if v not in order)
    print(f"\n{curve}: median of runs")
    print(f"{'variant':16} {'size':>6} {'x':>12} {'ns/op':>14} {'B/op':>14} {'allocs/op':>11}")
    for v in variants:
        for x, m in data[v]:
            print(
                f"{v:16} {m['label']:>6} {x:12.0f} {m.get('ns/op', 0):14.0f} "
                f"{m.get('B/op', 0):14.0f} {m.get('allocs/op', 0):11.0f}"
            )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("inputs", nargs="+", help="curve=FILE")
    args = ap.parse_args()
    for item in args.inputs:
        curve, _, path = item.partition("=")
        if curve not in CURVES:
            sys.exit(f"unknown curve {curve!r}")
        bench, _, xkind, _ = CURVES[curve]
        data = series(parse(path), bench, xkind)
        if not data:
            sys.exit(f"{path}: no {bench} results")
        table(curve, data)
        print("wrote", plot(curve, data, args.out))


if __name__ == "__main__":
    main()
