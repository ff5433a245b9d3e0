#!/usr/bin/env python3
"""Cost curves of the simulator (issues 17 and 32): statements per second, wall time and peak
memory against musicians and against simulated hours, each beside its SQLite floor, and a
sweep's wall time and peak memory against its number of seeds.

Usage: scripts/cost-curves.py [--bin PATH] [--out DIR] [--repeat K]
  --bin     the rehearsal binary (default: target/release/rehearsal; build it with
            `cargo build --release` first)
  --out     where the CSV and the SVGs go (default: reports/bench/cost-curves)
  --repeat  repeats per point for `bench --overhead` (fastest kept; default 1)
  --plots-only  redraw the SVGs from the CSV already in --out, without running anything

Every point is `rehearsal bench POINT.toml --overhead`: fleet-day (scenarios/bench/fleet-day.toml)
with its task count and simulated length changed, run and timed against the bare replay of its
own statements; its peak memory is the process's maximum resident set (`wait4`'s ru_maxrss),
which covers the run and its floor. The seeds curve is `rehearsal sweep
scenarios/bench/ci-smoke.toml --seeds 1..=N --jobs 2` for growing N, with its wall time and peak
memory the same way: linear time and flat memory are what a sweep of 10,000 seeds needs. Large fleets get shorter days so the whole thing takes a few minutes; the
pictures say so. Figures are wall-clock and depend on the machine and its load: the curves'
shapes, and the gap between the simulator and its floor, are what they show."""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

HOUR_MS = 3_600_000
SUBTITLE = "fleet-day, bench --overhead: wall clock, moves with the machine's load"
BASE = "scenarios/bench/fleet-day.toml"
# (musicians, simulated hours): a day up to 64 musicians, shorter days beyond.
BY_MUSICIANS = [(1, 24), (4, 24), (16, 24), (64, 24), (256, 6), (1000, 2)]
# 32 musicians (fleet-day's fleet) for longer and longer days.
BY_HOURS = [(32, 1), (32, 3), (32, 6), (32, 12), (32, 24)]
# ci-smoke sweeps of 1..=N seeds on 2 jobs.
BY_SEEDS = [125, 250, 500, 1000, 2000]
SWEEP = "scenarios/bench/ci-smoke.toml"


def point_scenario(base_text, musicians, hours):
    """fleet-day with `musicians` tasks for `hours` simulated hours (faults until 5/6 of it)."""
    text = re.sub(r"(?m)^count = \d+", f"count = {musicians}", base_text)
    text = re.sub(r"(?m)^sim_time_max_ms = [\d_]+", f"sim_time_max_ms = {hours * HOUR_MS}", text)
    text = re.sub(r"(?m)^until_ms = [\d_]+", f"until_ms = {hours * HOUR_MS * 5 // 6}", text)
    # A big fleet outruns one conductor's reviews: its false stale alarms are allowed, as in
    # fleet-1000.toml.
    return text.replace('allowed = ["owner-writes-only"', 'allowed = ["no-false-stale", "owner-writes-only"')


def run_child(argv):
    """Runs `argv`; (its stdout, wall seconds, peak resident memory in MiB from wait4)."""
    import time
    start = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall_s = time.monotonic() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        sys.exit(f"cost-curves: {' '.join(argv)} exited {child.returncode}")
    return out, wall_s, usage.ru_maxrss / 1024.0


def measure(binary, scenario_path, repeat):
    """(statements, run seconds, floor seconds, peak MiB) from `bench --overhead`'s lines."""
    out, _, peak_mib = run_child([binary, "bench", scenario_path, "--overhead", "--repeat", str(repeat)])
    statements = int(re.search(r"workload\s+(\d+) statements", out).group(1))
    run_ms = float(re.search(r"run\s+([\d.]+) ms", out).group(1))
    floor_ms = float(re.search(r"floor\s+([\d.]+) ms", out).group(1))
    return statements, run_ms / 1000.0, floor_ms / 1000.0, peak_mib


def measure_sweep(binary, seeds, scratch):
    """(wall seconds, peak MiB) of a 2-job sweep of ci-smoke over seeds 1..=`seeds`."""
    out_dir = os.path.join(scratch, f"sweep-{seeds}")
    _, wall_s, peak_mib = run_child([binary, "sweep", SWEEP, "--seeds", f"1..={seeds}", "--jobs", "2",
                                     "--out", out_dir, "-q", "--force"])
    return wall_s, peak_mib


def nice_ticks(top, count=5):
    """Round tick values from 0 to at least `top`."""
    raw = max(top, 1e-9) / count
    magnitude = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 10 ** -len(str(int(1 / raw)))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < top:
        ticks.append(ticks[-1] + step)
    return ticks


def label(value):
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def svg_plot(title, subtitle, x_label, y_label, xs, series, log_x, note):
    """A line chart: `series` is [(name, colour, ys)]; returns the SVG text."""
    import math
    width, height, left, right, top, bottom = 640, 400, 80, 170, 60, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    fx = (lambda v: math.log10(v)) if log_x else (lambda v: v)
    x_lo, x_hi = fx(min(xs)), fx(max(xs))
    y_ticks = nice_ticks(max(max(ys) for _, _, ys in series))
    y_hi = y_ticks[-1]

    def px(v):
        return left + (fx(v) - x_lo) / max(x_hi - x_lo, 1e-9) * plot_w

    def py(v):
        return top + plot_h - v / y_hi * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15" font-weight="bold">{title}</text>',
        f'<text x="{left}" y="40" fill="#555">{subtitle}</text>',
    ]
    for t in y_ticks:
        y = py(t)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{label(t)}</text>')
    for x in xs:
        out.append(f'<line x1="{px(x):.1f}" y1="{top + plot_h}" x2="{px(x):.1f}" y2="{top + plot_h + 5}" stroke="#333"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{label(x)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 22}" text-anchor="middle">{x_label}</text>')
    out.append(f'<text x="16" y="{top + plot_h / 2}" text-anchor="middle" transform="rotate(-90 16 {top + plot_h / 2})">{y_label}</text>')
    for i, (name, colour, ys) in enumerate(series):
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys))
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in zip(xs, ys):
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{colour}"><title>{name}: {label(x)} → {y:.4g}</title></circle>')
        ly = top + 14 + i * 20
        out.append(f'<line x1="{left + plot_w + 12}" y1="{ly - 4}" x2="{left + plot_w + 32}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{left + plot_w + 38}" y="{ly}">{name}</text>')
    for i, line in enumerate(note):
        out.append(f'<text x="{left + plot_w + 12}" y="{top + 80 + i * 16}" fill="#555" font-size="11">{line}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.environ.get("CARGO_TARGET_DIR", "target") + "/release/rehearsal")
    parser.add_argument("--out", default="reports/bench/cost-curves")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--plots-only", action="store_true")
    args = parser.parse_args()
    if args.plots_only:
        with open(os.path.join(args.out, "cost-curves.csv")) as f:
            rows = [dict(r, musicians=int(r["musicians"]), simulated_hours=int(r["simulated_hours"]),
                         run_statements_per_s=int(r["run_statements_per_s"]),
                         floor_statements_per_s=int(r["floor_statements_per_s"])) for r in csv.DictReader(f)]
        write_plots(rows, args.out)
        seeds_csv = os.path.join(args.out, "seeds-curve.csv")
        if os.path.exists(seeds_csv):
            with open(seeds_csv) as f:
                write_seed_plots(list(csv.DictReader(f)), args.out)
        return
    if not os.path.exists(args.bin):
        sys.exit(f"cost-curves: no binary at {args.bin} (cargo build --release, or --bin)")
    base_text = open(BASE).read()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cost-curves-") as scratch:
        for curve, points in (("musicians", BY_MUSICIANS), ("hours", BY_HOURS)):
            for musicians, hours in points:
                path = os.path.join(scratch, f"fleet-{musicians}x{hours}h.toml")
                with open(path, "w") as f:
                    f.write(point_scenario(base_text, musicians, hours))
                statements, run_s, floor_s, peak_mib = measure(args.bin, path, args.repeat)
                rows.append({
                    "curve": curve, "musicians": musicians, "simulated_hours": hours, "statements": statements,
                    "run_s": f"{run_s:.4f}", "floor_s": f"{floor_s:.4f}",
                    "run_statements_per_s": round(statements / run_s), "floor_statements_per_s": round(statements / floor_s),
                    "run_over_floor": f"{run_s / floor_s:.2f}", "peak_mib": f"{peak_mib:.1f}",
                })
                print(f"{curve:9} {musicians:5} musicians {hours:3} h: {statements:8} statements, "
                      f"run {run_s:7.3f} s, floor {floor_s:7.3f} s, peak {peak_mib:7.1f} MiB", file=sys.stderr)
        seed_rows = []
        for seeds in BY_SEEDS:
            wall_s, peak_mib = measure_sweep(args.bin, seeds, scratch)
            seed_rows.append({"seeds": seeds, "jobs": 2, "wall_s": f"{wall_s:.3f}",
                              "ms_per_seed": f"{wall_s * 1000 / seeds:.2f}", "peak_mib": f"{peak_mib:.1f}"})
            print(f"sweep {seeds:6} seeds: {wall_s:8.2f} s, {wall_s * 1000 / seeds:6.2f} ms a seed, peak {peak_mib:7.1f} MiB",
                  file=sys.stderr)
    write_csv(os.path.join(args.out, "cost-curves.csv"), rows)
    write_csv(os.path.join(args.out, "seeds-curve.csv"), seed_rows)
    write_plots(rows, args.out)
    write_seed_plots(seed_rows, args.out)


def write_csv(path, rows):
    """`rows` as CSV at `path`, written whole or not at all."""
    with open(path + ".tmp", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    os.replace(path + ".tmp", path)


def write_svg(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def write_seed_plots(rows, out):
    xs = [int(r["seeds"]) for r in rows]
    note = ["scenarios/bench/ci-smoke.toml,", "sweep --jobs 2,", "seeds 1..=N"]
    wall = svg_plot("Sweep wall time against seeds", "ci-smoke, 2 jobs: wall clock, moves with the machine's load",
                    "seeds", "wall seconds per sweep", xs,
                    [("rehearsal sweep", "#1f5fbf", [float(r["wall_s"]) for r in rows])], False, note)
    memory = svg_plot("Sweep peak memory against seeds", "ci-smoke, 2 jobs: peak resident set (wait4 ru_maxrss)",
                      "seeds", "peak MiB", xs,
                      [("rehearsal sweep", "#1f5fbf", [float(r["peak_mib"]) for r in rows])], False, note)
    write_svg(os.path.join(out, "wall-vs-seeds.svg"), wall)
    write_svg(os.path.join(out, "memory-vs-seeds.svg"), memory)


def write_plots(rows, out):
    run, floor = ("rehearsal (whole run)", "#1f5fbf"), ("SQLite floor", "#c0392b")
    shorter = [f"{m} musicians: {h} h" for m, h in BY_MUSICIANS if h != 24]
    for curve, x_key, x_label, log_x, note in (
        ("musicians", "musicians", "musicians (log scale)", True, ["24 simulated hours,", "shorter for big fleets:"] + shorter),
        ("hours", "simulated_hours", "simulated hours", False, ["32 musicians", "(fleet-day's fleet)"]),
    ):
        points = [r for r in rows if r["curve"] == curve]
        xs = [r[x_key] for r in points]
        rate = svg_plot(
            f"Statements per second against {curve}", SUBTITLE,
            x_label, "SQL statements per wall second", xs,
            [(run[0], run[1], [r["run_statements_per_s"] for r in points]),
             (floor[0], floor[1], [r["floor_statements_per_s"] for r in points])], log_x, note)
        wall = svg_plot(
            f"Wall time against {curve}", SUBTITLE,
            x_label, "wall seconds per run", xs,
            [(run[0], run[1], [float(r["run_s"]) for r in points]),
             (floor[0], floor[1], [float(r["floor_s"]) for r in points])], log_x, note)
        plots = [(f"statements-per-second-vs-{curve}.svg", rate), (f"wall-vs-{curve}.svg", wall)]
        if all("peak_mib" in r for r in points):
            memory = svg_plot(
                f"Peak memory against {curve}", "fleet-day, bench --overhead: peak resident set (wait4 ru_maxrss)",
                x_label, "peak MiB (run and floor in one process)", xs,
                [("bench --overhead", run[1], [float(r["peak_mib"]) for r in points])], log_x, note)
            plots.append((f"memory-vs-{curve}.svg", memory))
        for name, text in plots:
            write_svg(os.path.join(out, name), text)


if __name__ == "__main__":
    main()
