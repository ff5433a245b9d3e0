#!/usr/bin/env bash
# Issue 47's five figures, measured side by side in one run of this script, fastest of ROUNDS
# for every timed command, and docs/performance.md's figures section rewritten with them
# (between its `performance.sh` markers; the prose around them says what each figure means):
#
#   1. explore: `explore crashes scenarios/quickstart.toml --jobs 2`, wall, against the same
#      runs made one by one, each from the start (`explore ... --prefix none --jobs 2`: its own
#      runs, not a sweep of other seeds, whose runs are ~15 % shorter) — goal ≤ 0.5× (issue 47
#      item 1);
#   2. the SimPy peer: rehearsal's speed against real time on fleet-day against the peer's
#      (scripts/peer-ratio.sh) — goal ≥ 8×;
#   3. run / floor: `bench scenarios/bench/fleet-day.toml --overhead`'s run against its floor
#      — goal ≤ 1.5×;
#   4. a whole `rehearsal run` of fleet-day with its reports, process wall from start to exit,
#      against the bare simulation `bench --overhead` times (its run, in process) — goal ≤ 1.25×;
#   5. `sweep scenarios/bench/ci-smoke.toml --seeds 1..=10000 --jobs 2`, wall — goal ≤ 100 s,
#      its results.csv's first 1,000 rows equal, byte for byte, a sweep of seeds 1..=1000.
#
# The timed commands of 2-4 run in turn (a `run`, then a `bench --overhead --repeat 1`, ROUNDS
# times), so a slow moment of a shared machine hits both sides; the load average is printed
# before and after. Quote ratios, not absolute times, from a shared machine.
#
# Usage: scripts/performance.sh [--rounds N] [--bin PATH] [--peer PATH] [--seeds N] [--no-doc]
#   --seeds N   the large sweep's seeds (default 10000; the slice check uses min(N, 1000))
#   --no-doc    print the figures only, leave docs/performance.md alone
# Needs a release build (cargo build --release) and `pip install simpy==4.1.2` for the peer.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
bin=${CARGO_TARGET_DIR:-target}/release/rehearsal
peer=../shared/peers/simpy_fleet.py
seeds=10000
write_doc=1
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --peer) peer=$2; shift 2 ;;
        --seeds) seeds=$2; shift 2 ;;
        --no-doc) write_doc=0; shift ;;
        *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || { echo "performance.sh: no binary at $bin (cargo build --release)" >&2; exit 2; }
python3 -c 'import simpy' 2>/dev/null || { echo "performance.sh: the peer needs simpy (pip install simpy==4.1.2)" >&2; exit 2; }

# Runs are made on /dev/shm where it exists, as rehearsal's own campaigns make theirs.
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
scratch=$(mktemp -d "$base/rehearsal-performance.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }
# Wall seconds of one command (its output to $scratch/out). Exit 1 is a verdict (fleet-day's
# random faults fail it), not an error; 2 and above stop the script.
wall() {
    local start end status=0
    start=$(date +%s%N)
    "$@" >"$scratch/out" 2>&1 || status=$?
    end=$(date +%s%N)
    if [ "$status" -gt 1 ]; then
        echo "performance.sh: failed (exit $status): $*" >&2
        tail -20 "$scratch/out" >&2
        exit 1
    fi
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }'
}
min() { printf '%s\n' "$@" | sort -g | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v x="$1" -v goal="$2" -v op="$3" 'BEGIN { ok = (op == "le") ? x <= goal : x >= goal; print ok ? "yes" : "no" }'; }

build=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || build="$build+changes"
load_start=$(load)
started_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
echo "performance.sh: build $build, $rounds rounds, load average $load_start ($started_utc)" >&2

# 2. The SimPy peer (its own script: bench --overhead and the peer in turn, fastest of each).
peer_line=$(scripts/peer-ratio.sh "$rounds" "$bin" "$peer" 2>"$scratch/peer.log")
peer_x=$(sed -n 's/.*rehearsal is \([0-9.]*\)x the peer.*/\1/p' <<<"$peer_line")
echo "  peer: $peer_line" >&2

# 3 and 4. A whole `run` with its reports, then `bench --overhead`, in turn.
fleet=scenarios/bench/fleet-day.toml
run_walls=() bench_runs=() bench_floors=()
for _ in $(seq "$rounds"); do
    run_walls+=("$(wall "$bin" --quiet run "$fleet" --out "$scratch/fleet-run" --force)")
    "$bin" bench "$fleet" --overhead --repeat 1 >"$scratch/bench" 2>&1
    bench_runs+=("$(sed -n 's/^run  *\([0-9.]*\) ms.*/\1/p' "$scratch/bench")")
    bench_floors+=("$(sed -n 's/^floor  *\([0-9.]*\) ms.*/\1/p' "$scratch/bench")")
done
timeline_bytes=$(stat -c %s "$scratch/fleet-run/timeline.html")
run_s=$(min "${run_walls[@]}")
sim_ms=$(min "${bench_runs[@]}")
floor_ms=$(min "${bench_floors[@]}")
floor_x=$(ratio "$sim_ms" "$floor_ms")
reports_x=$(ratio "$run_s" "$(awk -v m="$sim_ms" 'BEGIN { print m / 1000 }')")
echo "  run / floor: $sim_ms ms / $floor_ms ms = ${floor_x}x; run with reports ${run_s} s = ${reports_x}x the bare run" >&2

# 1. explore against its runs one by one.
explore_walls=() sweep_walls=()
for _ in $(seq "$rounds"); do
    explore_walls+=("$(wall "$bin" --quiet explore crashes scenarios/quickstart.toml --jobs 2 --out "$scratch/explore" --force)")
done
explored=$(($(wc -l <"$scratch/explore/explore.csv") - 1))
for _ in $(seq "$rounds"); do
    sweep_walls+=("$(wall "$bin" --quiet explore crashes scenarios/quickstart.toml --prefix none --jobs 2 --out "$scratch/one-by-one" --force)")
done
explore_s=$(min "${explore_walls[@]}")
one_by_one_s=$(min "${sweep_walls[@]}")
explore_x=$(ratio "$explore_s" "$one_by_one_s")
echo "  explore: ${explore_s} s for $explored runs, one by one ${one_by_one_s} s: ${explore_x}x" >&2

# 5. The large ci-smoke sweep, and its first 1,000 rows against a sweep of those seeds alone.
smoke=scenarios/bench/ci-smoke.toml
smoke_walls=()
for _ in $(seq "$rounds"); do
    smoke_walls+=("$(wall "$bin" --quiet sweep "$smoke" --seeds "1..=$seeds" --jobs 2 --out "$scratch/smoke" --force)")
done
smoke_s=$(min "${smoke_walls[@]}")
slice=$((seeds < 1000 ? seeds : 1000))
wall "$bin" --quiet sweep "$smoke" --seeds "1..=$slice" --jobs 2 --out "$scratch/slice" --force >/dev/null
if head -n $((slice + 1)) "$scratch/smoke/results.csv" | cmp -s - "$scratch/slice/results.csv"; then
    identical=yes
else
    identical=no
fi
echo "  ci-smoke: $seeds seeds in ${smoke_s} s; first $slice rows identical to their own sweep: $identical" >&2
load_end=$(load)
# A machine busier than its cores makes every wall figure the load's: the table says so. The
# load at the start is other work's; at the end it includes this script's own 2-job sweep, which
# alone brings it to about the cores, so the end is judged against one core more.
loaded=$(awk -v a="${load_start%% *}" -v b="${load_end%% *}" -v cores="$(nproc)" 'BEGIN {
    if (a > cores || b > cores + 1) printf " **The load average was above the %d cores: these wall times and ratios are the load'"'"'s, not the build'"'"'s (a process got a fraction of a core); measure again on a quiet machine.**", cores }')

table=$(
    cat <<EOF
Measured by \`scripts/performance.sh --rounds $rounds\` on build \`$build\`, $started_utc, load
average $load_start at the start and $load_end at the end (1, 5, 15 min; 2 cores). Fastest of
$rounds for every timed command; ratios are of commands run in turn in this one call.$loaded

| figure | measured | goal | met? |
| --- | --- | --- | --- |
| explore: \`explore crashes\` on quickstart against its runs one by one, 2 jobs | ${explore_s} s against ${one_by_one_s} s for $explored runs: **${explore_x}×** | ≤ 0.5× | $(verdict "$explore_x" 0.5 le) |
| fleet-day against the SimPy peer | $(sed 's/: rehearsal is.*//' <<<"$peer_line"): **${peer_x}×** | ≥ 8× | $(verdict "$peer_x" 8 ge) |
| fleet-day run / SQLite floor | ${sim_ms} ms against ${floor_ms} ms: **${floor_x}×** | ≤ 1.5× | $(verdict "$floor_x" 1.5 le) |
| fleet-day \`run\` with its reports (whole process) / the bare run | ${run_s} s against ${sim_ms} ms: **${reports_x}×** (timeline.html $timeline_bytes bytes) | ≤ 1.25× | $(verdict "$reports_x" 1.25 le) |
| $seeds ci-smoke seeds, 2 jobs | **${smoke_s} s** wall; first $slice rows of results.csv identical to a sweep of seeds 1..=$slice: $identical | ≤ 100 s, identical | $( [ "$identical" = yes ] && verdict "$smoke_s" 100 le || echo no) |
EOF
)
printf '%s\n' "$table"

if [ "$write_doc" -eq 1 ]; then
    TABLE="$table" python3 - docs/performance.md <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
begin, end = "<!-- performance.sh: figures begin -->", "<!-- performance.sh: figures end -->"
if begin not in text or end not in text:
    sys.exit(f"performance.sh: {path} has no figures markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w", encoding="utf-8").write(f"{head}{begin}\n{os.environ['TABLE']}\n{end}{tail}")
PY
    echo "performance.sh: docs/performance.md's figures rewritten" >&2
fi
