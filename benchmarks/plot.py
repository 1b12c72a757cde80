#!/usr/bin/env python3
"""Turns the benchmarks' CSV files (--csv FILE) into PNG plots.

    apt-get install -y python3-matplotlib      # once; the tests do not need it
    /usr/bin/python3 benchmarks/plot.py --out docs/plots a.csv [more.csv ...]

Rows are recognised by their `benchmark` column (or, for bench_scaling_on_paper, by its
columns); rows of one benchmark from several files (one per `mpirun -np P`) are plotted
together:
  bench_scaling_on_paper -> scaling_on_paper.png: bytes of the busiest rank other than root per
      scheme against P, with the memory-independent lower bound, and the model's seconds.
  bench_distributed_matmul ->
      matmul_phases.png: seconds per phase (scatter, execute, gather) of plan.run() per grid and
          of ScaLAPACK's p?gemr2d / p?gemm / p?gemr2d, stacked, one panel per (type, n, P);
      workpart_vs_scalapack.png: per P, the best workpart grid against ScaLAPACK, compute only
          and end to end from root, one panel per (type, n);
      bytes_predicted_vs_measured.png: bytes received per phase as measured against the plan's
          prediction, one point per grid and phase (on the diagonal when they agree).
  bench_attention_softmax -> attention_softmax.png: speed-up over the one-process hand-written
      Eigen baseline per variant and P.
  bench_networks -> networks.png: modelled seconds per training step against P, the found
      strategy beside data parallelism and the experts', one panel per network.
  bench_networks_run (--run) -> networks_run.png: measured seconds per step (solid) and the
      calibrated model's (dashed) against the rank count, per strategy, one panel per network;
      model.png (bench_model): measured against modelled seconds, a point per strategy and
      rank count, with the diagonal and the 0.67-1.5x band, one panel per network.
Rows of other benchmarks are reported and skipped.
"""
import argparse
import csv
import os
import sys
from collections import OrderedDict


def read_rows(path):
    with open(path, newline="") as f:
        # (a file appended to by several runs repeats its header line: those rows are skipped)
        return [r for r in csv.DictReader(f) if r.get("benchmark") != "benchmark"]


def num(r, key):
    v = r.get(key, "")
    return float(v) if v not in ("", None) else None


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
    return [path]


def grid_panels(n_panels, plt, width=5.5, height=4.0):
    cols = min(n_panels, 3)
    rows = (n_panels + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n_panels:]:
        ax.axis("off")
    return fig, flat


def plot_matmul(rows, out_dir, plt):
    paths = []
    # ---- phases, stacked, per (type, n, P) ----
    keys = list(OrderedDict.fromkeys((r["type"], int(r["n"]), int(r["P"])) for r in rows))
    keys.sort(key=lambda k: (k[0], k[1], k[2]))
    fig, axes = grid_panels(len(keys), plt)
    colours = {"scatter": "#4c72b0", "execute": "#55a868", "gather": "#c44e52"}
    for ax, (t, n, p) in zip(axes, keys):
        sel = [r for r in rows if (r["type"], int(r["n"]), int(r["P"])) == (t, n, p)]
        names = [r["variant"] for r in sel]
        bottom = [0.0] * len(sel)
        for phase in ("scatter", "execute", "gather"):
            vals = [num(r, phase + "_s") or 0.0 for r in sel]
            ax.bar(range(len(sel)), vals, bottom=bottom, color=colours[phase], label=phase)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.scatter(range(len(sel)), [num(r, "total_s") for r in sel], color="k", marker="_", s=200,
                   zorder=3, label="total (wall)")
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel("seconds (slowest rank, median)")
        ax.set_title(f"{t} n={n} P={p}")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("matmul C += A*B: plan.run() per grid and ScaLAPACK, time per phase")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    path = os.path.join(out_dir, "matmul_phases.png")
    fig.savefig(path, dpi=80)
    plt.close(fig)
    paths.append(path)

    # ---- workpart (best grid) vs ScaLAPACK per P ----
    tn = sorted(OrderedDict.fromkeys((r["type"], int(r["n"])) for r in rows))
    have_sl = any(r["library"] == "scalapack" for r in rows)
    if have_sl:
        fig, axes = grid_panels(len(tn), plt)
        for ax, (t, n) in zip(axes, tn):
            sel = [r for r in rows if (r["type"], int(r["n"])) == (t, n)]
            ps = sorted({int(r["P"]) for r in sel})
            series = {"workpart end to end": [], "ScaLAPACK end to end": [],
                      "workpart compute": [], "ScaLAPACK compute": []}
            for p in ps:
                wp_rows = [r for r in sel if int(r["P"]) == p and r["library"] == "workpart"]
                sl_rows = [r for r in sel if int(r["P"]) == p and r["library"] == "scalapack"]
                whole = [r for r in wp_rows if r["compute_partial"] == "0"] or wp_rows
                series["workpart end to end"].append(min(num(r, "total_s") for r in wp_rows))
                series["workpart compute"].append(min(num(r, "compute_s") for r in whole))
                series["ScaLAPACK end to end"].append(num(sl_rows[0], "total_s") if sl_rows else None)
                series["ScaLAPACK compute"].append(num(sl_rows[0], "compute_s") if sl_rows else None)
            width = 0.2
            for s, (name, vals) in enumerate(series.items()):
                xs = [x + (s - 1.5) * width for x in range(len(ps))]
                ax.bar(xs, [v or 0 for v in vals], width, label=name,
                       hatch="//" if "ScaLAPACK" in name else None,
                       color="#4c72b0" if "end" in name else "#55a868",
                       alpha=1.0 if "workpart" in name else 0.55)
            ax.set_xticks(range(len(ps)))
            ax.set_xticklabels([f"P={p}" for p in ps])
            ax.set_ylabel("seconds (median)")
            ax.set_title(f"{t} n={n}")
            ax.grid(True, axis="y", alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.suptitle("workpart (best grid) vs ScaLAPACK p?gemm on the same processes")
        fig.tight_layout(rect=(0, 0, 1, 0.95))
        path = os.path.join(out_dir, "workpart_vs_scalapack.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)

    # ---- bytes: predicted against measured ----
    fig, ax = plt.subplots(figsize=(6, 5))
    lo, hi = None, None
    for phase, marker in (("scatter", "o"), ("gather", "s")):
        pts = [(num(r, "predicted_" + phase + "_bytes"), num(r, phase + "_bytes"))
               for r in rows if r["library"] == "workpart"]
        pts = [(p, m) for p, m in pts if p and m]
        if not pts:
            continue
        ax.scatter([p for p, _ in pts], [m for _, m in pts], marker=marker, label=phase, alpha=0.7)
        lo = min([lo] + [min(p, m) for p, m in pts] if lo else [min(p, m) for p, m in pts])
        hi = max([hi] + [max(p, m) for p, m in pts] if hi else [max(p, m) for p, m in pts])
    if lo and hi:
        ax.plot([lo, hi], [lo, hi], "k--", linewidth=1, label="measured = predicted")
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("predicted bytes (plan, before running)")
    ax.set_ylabel("measured bytes received (sum over ranks)")
    ax.set_title("matmul plans: bytes predicted vs measured")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "bytes_predicted_vs_measured.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    paths.append(path)
    return paths


def plot_attention_softmax(rows, out_dir, plt):
    workloads = list(OrderedDict.fromkeys(r["workload"] for r in rows))
    fig, axes = grid_panels(len(workloads), plt, width=6.5)
    for ax, w in zip(axes, workloads):
        sel = [r for r in rows if r["workload"] == w]
        variants = list(OrderedDict.fromkeys(r["variant"] for r in sel))
        ps = sorted({int(r["P"]) for r in sel})
        width = 0.8 / max(1, len(ps))
        for k, p in enumerate(ps):
            vals = []
            for v in variants:
                m = [r for r in sel if r["variant"] == v and int(r["P"]) == p]
                vals.append(num(m[0], "speedup") if m else 0)
            xs = [x + (k - (len(ps) - 1) / 2) * width for x in range(len(variants))]
            ax.bar(xs, [v or 0 for v in vals], width, label=f"P={p}")
        ax.axhline(1.0, color="k", linewidth=1, linestyle="--")
        ax.set_xticks(range(len(variants)))
        ax.set_xticklabels(variants, rotation=25, ha="right", fontsize=8)
        ax.set_ylabel("speed-up over hand-written Eigen, 1 process")
        ax.set_title(w)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("plan.run() (scatter, execute, gather) against the hand-written baseline")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    path = os.path.join(out_dir, "attention_softmax.png")
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return [path]


def plot_per_network(rows, out_dir, plt, name, title, xlabel, ylabel, draw, log_x=False):
    """One panel per network (the rows' `network` column, in order): draw(ax, its rows)."""
    networks = list(OrderedDict.fromkeys(r["network"] for r in rows))
    fig, axes = grid_panels(len(networks), plt)
    for ax, n in zip(axes, networks):
        draw(ax, [r for r in rows if r["network"] == n])
        if log_x:
            ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(n)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return [path]


def plot_networks(rows, out_dir, plt):
    def draw(ax, sel):
        sel = sorted(sel, key=lambda r: int(r["p"]))
        ps = [int(r["p"]) for r in sel]
        for key, label, style in (("found_s", "found (wp::optimize)", "o-"),
                                  ("data_parallel_s", "data parallelism", "s--"),
                                  ("expert_s", "experts' strategy", "^:")):
            ax.plot(ps, [float(r[key]) for r in sel], style, label=label)

    return plot_per_network(
        rows, out_dir, plt, "networks.png",
        "Whole networks: the found strategy beside both baselines, one machine model",
        "ranks P", "modelled seconds per training step", draw, log_x=True)


def plot_networks_run(rows, out_dir, plt):
    def draw(ax, sel):
        for k, s in enumerate(OrderedDict.fromkeys(r["strategy"] for r in sel)):
            pts = sorted((r for r in sel if r["strategy"] == s), key=lambda r: int(r["p"]))
            ps = [int(r["p"]) for r in pts]
            ax.plot(ps, [float(r["measured_s"]) for r in pts], "o-", color=f"C{k}",
                    label=f"{s}, measured")
            ax.plot(ps, [float(r["modelled_s"]) for r in pts], "x--", color=f"C{k}",
                    label=f"{s}, modelled")
        ax.set_xticks(sorted({int(r["p"]) for r in sel}))

    return plot_per_network(
        rows, out_dir, plt, "networks_run.png",
        "Whole networks scaled down: measured beside the calibrated model",
        "ranks (mpirun -np)", "seconds per training step", draw)


def plot_model(rows, out_dir, plt):
    """bench_model: each strategy's measured seconds against its modelled seconds, one point
    per strategy and rank count, with the diagonal and the 0.67-1.5x band."""
    def draw(ax, sel):
        for k, p in enumerate(sorted({int(r["p"]) for r in sel})):
            pts = [r for r in sel if int(r["p"]) == p]
            xs = [float(r["modelled_s"]) for r in pts]
            ys = [float(r["measured_s"]) for r in pts]
            ax.plot(xs, ys, "o", color=f"C{k}", label=f"np {p}")
            for r, x, y in zip(pts, xs, ys):
                if r["strategy"] in ("found", "data parallel", "experts'"):
                    ax.annotate(r["strategy"], (x, y), fontsize=6)
        lo = min(min(float(r["modelled_s"]), float(r["measured_s"])) for r in sel) / 1.5
        hi = max(max(float(r["modelled_s"]), float(r["measured_s"])) for r in sel) * 1.5
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="measured = modelled")
        ax.plot([lo, hi], [0.67 * lo, 0.67 * hi], "k:", lw=0.6)
        ax.plot([lo, hi], [1.5 * lo, 1.5 * hi], "k:", lw=0.6, label="0.67-1.5x")
        ax.set_xscale("log")
        ax.set_xlabel("modelled seconds per step (calibrated model)")

    return plot_per_network(
        rows, out_dir, plt, "model.png",
        "bench_model: measured against modelled seconds per training step, per strategy",
        "modelled seconds per step", "measured seconds per step", draw)


def plot_networks_run_and_model(rows, out_dir, plt):
    return plot_networks_run(rows, out_dir, plt) + plot_model(rows, out_dir, plt)


PLOTTERS = {
    "bench_networks": plot_networks,
    "bench_networks_run": plot_networks_run_and_model,
    "bench_distributed_matmul": plot_matmul,
    "bench_attention_softmax": plot_attention_softmax,
}


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
    by_bench = OrderedDict()
    for path in args.csv:
        rows = read_rows(path)
        cols = set(rows[0].keys()) if rows else set()
        if {"P", "scheme", "busiest_rank_bytes", "lower_bound_bytes", "model_seconds"} <= cols:
            by_bench.setdefault("bench_scaling_on_paper", []).extend(rows)
        elif "benchmark" in cols:
            for r in rows:
                by_bench.setdefault(r["benchmark"], []).append(r)
        else:
            print(f"plot.py: {path}: columns {sorted(cols)} are not a known benchmark's; skipped", file=sys.stderr)
    for bench, rows in by_bench.items():
        if bench == "bench_scaling_on_paper":
            made = plot_scaling(rows, args.out, plt)
        elif bench in PLOTTERS:
            made = PLOTTERS[bench](rows, args.out, plt)
        else:
            print(f"plot.py: no plot for {bench} yet; its rows are skipped", file=sys.stderr)
            continue
        for p in made:
            print(p)


if __name__ == "__main__":
    main()
