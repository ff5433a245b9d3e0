#!/usr/bin/env bash
# The files a set of sweeps writes, as one listing to diff between two builds: a refactor of
# the sweep (issue 46, "a sweep in rooms") must leave every byte of results.csv, summary.md,
# pairs.jsonl, junit.xml, coverage.csv, manifest and failures/ as they were. Only what no two
# runs share is masked: wall times (junit.xml `time`/`timestamp`, pairs.jsonl `wall_ms`), the
# build id in the manifest, the binary's path and the temporary folder's path.
#
# Usage: scripts/sweep-outputs.sh BINARY WORK_DIR > listing.txt
#        diff <(scripts/sweep-outputs.sh old/rehearsal /tmp/a) <(scripts/sweep-outputs.sh target/debug/rehearsal /tmp/b)
set -uo pipefail
bin=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
faults="scenarios/faults/random-faults.toml scenarios/faults/zombie.toml"

# One sweep: its exit code, stdout and stderr (masked), then every file it left.
sweep() {
    local name=$1
    shift
    local out="$work/$name"
    "$bin" sweep "$@" --out "$out" >"$work/$name.stdout" 2>"$work/$name.stderr"
    echo "== $name: exit $?"
}

sweep smoke scenarios/bench/ci-smoke.toml --seeds 1..=40 --jobs 2
# Two scenarios given out of name order, failures saved (zombie fails every seed).
sweep faults scenarios/faults/zombie.toml scenarios/faults/random-faults.toml --seeds 1..=12 --jobs 2
# The same folder again: the saved failures of the first are replayed (stderr) before it is cleared.
sweep faults scenarios/faults/zombie.toml scenarios/faults/random-faults.toml --seeds 1..=12 --jobs 2 --force
sweep shard1 $faults --seeds 1..=9 --jobs 2 --shard 1/2
sweep shard2 $faults --seeds 1..=9 --jobs 2 --shard 2/2
"$bin" merge "$work/shard1" "$work/shard2" --out "$work/merged" >"$work/merged.stdout" 2>"$work/merged.stderr"
echo "== merged: exit $?"
# A scenario named twice: its pairs cannot be walked in results.csv's order (sorted at the end).
sweep twice scenarios/quickstart.toml scenarios/faults/zombie.toml scenarios/quickstart.toml --seeds 2..=4 --jobs 2
sweep determinism scenarios/faults/zombie.toml --seeds 21 --check-determinism
sweep own scenarios/quickstart.toml scenarios/faults/zombie.toml --jobs 2 --protocol repaired
sweep bless $faults --seeds 1..=6 --jobs 2 --baseline "$work/baseline.txt" --bless
sweep known $faults --seeds 1..=8 --jobs 2 --baseline "$work/baseline.txt"
sweep keep $faults --seeds 1..=4 --baseline "$work/baseline.txt" --keep-known --fail-fast

cd "$work" || exit 3
find . -type f | LC_ALL=C sort | while read -r file; do
    case "$file" in
    *.db | *.db-wal | *.db-shm) echo "-- $file $(sha256sum <"$file" | cut -c1-16)" ;;
    *)
        echo "-- $file"
        sed -E -e "s#$work#WORK#g" -e "s#$bin#BIN#g" \
            -e 's/(time|timestamp)="[^"]*"/\1="~"/g' \
            -e 's/"wall_ms":[0-9]+/"wall_ms":~/g' \
            -e 's/^(build *[=:]? *).*/\1~/' \
            -e 's/[0-9]+(\.[0-9]+)? ?(s|ms) wall/~ wall/g' "$file"
        ;;
    esac
done
