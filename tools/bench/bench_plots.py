"""The benchmark's plots (gnuplot, SVG): median pps against senders from the
sweep, and median pps per compared kernel and scenario."""

import shutil
import subprocess


def gnuplot(script):
    subprocess.run(["gnuplot", "-e", script], check=True)


def plot_sweep(sweep, outdir):
    """SVG of median pps (min-max bars) against senders, one line per kernel and
    queue count; None without sweep data."""
    lines = {}
    for r in sweep:
        if r["repetitions"]:
            lines.setdefault((r["kernel"], r["queues"]), []).append(r)
    if not lines:
        return None
    plots = []
    for (kernel, queues), rows in lines.items():
        data = outdir / f"sweep-{kernel}-q{queues}.dat"
        data.write_text("".join(f"{r['senders']} {r['pps_median'] / 1e6:.4f} "
                                f"{r['pps_min'] / 1e6:.4f} {r['pps_max'] / 1e6:.4f}\n"
                                for r in sorted(rows, key=lambda r: r["senders"])))
        qdisc = "pfifo_fast" if queues == 1 else "mq"
        plots.append(f"'{data}' using 1:2:3:4 with yerrorlines pointtype 7 "
                     f"title '{kernel}, {queues} TX queue(s), {qdisc}'")
    senders = [r["senders"] for r in sweep]
    svg = outdir / "bench.svg"
    gnuplot(f"set terminal svg size 800,500 noenhanced; set output '{svg}';"
            f"set xrange [{min(senders) - 0.2}:{max(senders) + 0.2}]; set xtics 1;"
            "set yrange [0:*]; set key top left; set grid;"
            "set xlabel 'senders (pktgen threads)'; set ylabel 'Mpps (UML, not hardware)';"
            "set title 'median pps against senders, min-max bars';"
            "plot " + ", ".join(plots))
    return svg


def plot_bars(summary, outdir):
    """SVG bar chart of median pps per compared scenario and kernel."""
    seen = {}
    for r in summary:
        if r["repetitions"]:
            seen[f"{r['a'][0]}:{r['a'][1]}"] = r["a_pps_median"]
            seen[f"{r['b'][0]}:{r['b'][1]}"] = r["b_pps_median"]
    if not seen:
        return None
    data = outdir / "plot.dat"
    data.write_text("".join(f"\"{k}\" {v / 1e6:.4f}\n" for k, v in sorted(seen.items())))
    svg = outdir / "bench-bars.svg"
    gnuplot(f"set terminal svg size 1000,500 noenhanced; set output '{svg}';"
            "set style fill solid; set boxwidth 0.7; set ylabel 'Mpps (UML, not hardware)';"
            "set xtics rotate by -35 left; set bmargin 14; set rmargin 12; set yrange [0:*];"
            "set title 'median pps per kernel:scenario';"
            f"plot '{data}' using 2:xtic(1) with boxes notitle")
    return svg


def plot(data, outdir):
    """The SVGs written (gnuplot): pps against senders (bench.svg) and the
    per-scenario bars (bench-bars.svg); none without gnuplot."""
    if not shutil.which("gnuplot"):
        return []
    svgs = [plot_sweep(data["sweep"], outdir), plot_bars(data["comparisons"], outdir)]
    return [s for s in svgs if s]
