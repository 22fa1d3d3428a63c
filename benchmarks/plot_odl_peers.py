"""Plot held-out objective against training time from saved outputs of ``bench_odl_peers.py``.

One panel per output file (one ``--k`` each), one curve per method, the
target level dotted. Reads only the printed table, so the figure shows the
numbers the benchmark printed.

Usage::

    python benchmarks/bench_odl_peers.py --k 100 --repeats 3 > k100.txt
    python benchmarks/bench_odl_peers.py --k 400 --checkpoints 5 10 20 40 --repeats 2 --no-tol > k400.txt
    python benchmarks/plot_odl_peers.py k100.txt k400.txt docs/reports/figures/ng_odl_peers.png
"""

import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"ours (1 sweep/batch)": "C0", "ours (1 sweep, weighted)": "C1", "ours (sweeps to tol)": "C2",
          "spams trainDL": "C3", "sklearn MBDL": "C4"}


def panel(ax, text):
    k = re.search(r"k=(\d+)", text).group(1)
    names = [n.strip() for n in next(line for line in text.splitlines() if line.startswith("  N  |")).split("|")[1:]]
    start = float(re.search(r"objective at start: ([0-9.]+)", text).group(1))
    target = float(re.search(r"target = ([0-9.]+)", text).group(1))
    rows = [line for line in text.splitlines() if re.match(r"^\s*\d+ \|", line)]
    for j, name in enumerate(names):
        ts, objs = [0.0], [start]
        for row in rows:
            cell = row.split("|")[j + 1].split()  # "<seconds> s <objective>"
            ts.append(float(cell[0]))
            objs.append(float(cell[2]))
        ax.plot(ts, objs, "o-", ms=3, label=name, color=COLORS.get(name))
    ax.axhline(target, color="k", lw=0.6, ls=":", label="target")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(0, 150)
    ax.set_xlabel("training time (s, one thread)")
    ax.set_ylabel("held-out objective")
    ax.set_title(f"32x32 images, m = 1024, k = {k}, batch 200")
    ax.legend(fontsize=7)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        raise SystemExit(__doc__)
    *inputs, out = argv
    fig, axes = plt.subplots(1, len(inputs), figsize=(5 * len(inputs), 3.8), squeeze=False)
    for ax, path in zip(axes[0], inputs):
        with open(path) as f:
            panel(ax, f.read())
    fig.tight_layout()
    fig.savefig(out, dpi=150)  # print resolution, as the reproductions (simulations/_harness.MIN_DPI)


if __name__ == "__main__":
    main()
