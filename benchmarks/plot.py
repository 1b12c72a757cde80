#!/usr/bin/env python3
"""Turns the benchmarks' CSV files (--csv FILE) into PNG plots.

    apt-get install -y python3-matplotlib      # once; the tests do not need it
    /usr/bin/python3 benchmarks/plot.py --out docs/plots scaling.csv [more.csv ...]

Each CSV is recognised by its columns:
  bench_scaling_on_paper  (P, scheme, busiest_rank_bytes, lower_bound_bytes, model_seconds):
      scaling_on_paper.png — bytes of the busiest rank other than root per scheme against P,
      with the memory-independent lower bound, and the alpha-beta model's seconds.
A CSV of another shape is reported and skipped.
"""
import argparse
import csv
import os
import sys


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def plot_scaling(rows, out_dir, plt):
    schemes = []
    for r in rows:
        if r["scheme"] not in schemes:
            schemes.append(r["scheme"])
    fig, (ax_bytes, ax_time) = plt.subplots(1, 2, figsize=(12, 4.5))
    for s in schemes:
        pts = [r for r in rows if r["scheme"] == s]
        ps = [int(r["P"]) for r in pts]
        ax_bytes.plot(ps, [float(r["busiest_rank_bytes"]) for r in pts], marker="o", label=s)
        ax_time.plot(ps, [float(r["model_seconds"]) for r in pts], marker="o", label=s)
    bound = {}
    for r in rows:
        bound[int(r["P"])] = float(r["lower_bound_bytes"])
    ps = sorted(bound)
    ax_bytes.plot(ps, [bound[p] for p in ps], "k--", label="lower bound (Al Daas et al. 2022)")
    for ax in (ax_bytes, ax_time):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks P")
        ax.grid(True, which="both", alpha=0.3)
    ax_bytes.set_ylabel("bytes of the busiest rank other than root")
    ax_bytes.set_title("matmul plans on paper: bytes per rank")
    ax_time.set_ylabel("alpha-beta model seconds (root included)")
    ax_time.set_title("predicted time")
    ax_bytes.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "scaling_on_paper.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=".", help="folder for the PNG files")
    ap.add_argument("csv", nargs="+", help="CSV files written by the benchmarks' --csv")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot.py: needs matplotlib (apt-get install -y python3-matplotlib; run it with /usr/bin/python3)")
    os.makedirs(args.out, exist_ok=True)
    for path in args.csv:
        rows = read_rows(path)
        cols = set(rows[0].keys()) if rows else set()
        if {"P", "scheme", "busiest_rank_bytes", "lower_bound_bytes", "model_seconds"} <= cols:
            print(plot_scaling(rows, args.out, plt))
        else:
            print(f"plot.py: {path}: columns {sorted(cols)} are not a known benchmark's; skipped", file=sys.stderr)


if __name__ == "__main__":
    main()
