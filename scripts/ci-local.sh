#!/usr/bin/env bash
# Runs CI's two lanes (.github/workflows/rehearsal.yml) on this machine: the PR lane (the
# regression corpus, then README's strict and baselined suites), then one night of the nightly lane — the N shards at once as
# background processes, then `rehearsal merge --baseline`; exits with the first non-zero code
# (0 pass, 1 a regression, a fault that never fired or a shard's results missing, 2 bad input
# or shards of different suites, 3 harness).
#
# Usage: scripts/ci-local.sh [N] [OUT]      (N shards, default 4; OUT default reports/ci-local)
# Environment:
#   LANES      `pr nightly` (default), `pr` or `nightly`
#   NIGHT      the night's date, YYYY-MM-DD (default: today, UTC); the same date sweeps the
#              same seeds: a night is re-run from its date alone
#   NIGHT_SEEDS  seeds of each scenario (default: the workflow's NIGHT_SEEDS)
#   SUITE      the nightly lane's scenarios and flags, word-split (default: the workflow's
#              SUITE with --seeds night:$NIGHT:$NIGHT_SEEDS); a SUITE given here carries its
#              own --seeds, and its merge has no baseline unless BASELINE says one
#   BASELINE   the nightly merge's --baseline (default: the workflow's NIGHT_BASELINE)
#   BLESS      1: write BASELINE from the shards (`merge --bless-modes`), then judge by it
#   RECORD     1: count the night in BASELINE's failing modes (`merge --record-night`)
#   EXPIRE_AFTER  a known failure mode that passed this many nights in a row is known no
#              more (`merge --expire-after`, default 7, as the workflow)
#   REHEARSAL  the binary (default: a release build of this checkout, built first)
#   JOBS       --jobs of each shard (default 1: the N shards already run side by side)
# Shards write OUT/shard-I/ (their stdout and stderr in OUT/logs/shard-I.log, so that
# OUT/shard-*/ holds shard folders only), the merge OUT/merged/, the PR lane OUT/pr/; what an
# earlier run of the script wrote there is replaced (--force).
set -euo pipefail
cd "$(dirname "$0")/.."
shards=${1:-4}
out=${2:-reports/ci-local}
workflow=.github/workflows/rehearsal.yml
setting() { sed -n "s/^  $1: *//p" "$workflow"; }
lanes=${LANES:-pr nightly}
if [ -z "${REHEARSAL:-}" ]; then
    cargo build --release --locked --quiet
    REHEARSAL=${CARGO_TARGET_DIR:-target}/release/rehearsal
fi
mkdir -p "$out/logs"
verdict=0

if [[ " $lanes " == *" pr "* ]]; then
    # The PR lane, as the workflow's `pr` job runs it: the regression corpus first, its record
    # of passes in a row kept in OUT from one run of the script to the next.
    code=0
    "$REHEARSAL" corpus tests/corpus --streaks "$out/corpus-streaks.txt" >"$out/logs/corpus.log" 2>&1 || code=$?
    echo "ci-local: PR lane, regression corpus exited $code; see $out/logs/corpus.log" >&2
    [ "$verdict" -ne 0 ] || verdict=$code
    code=0
    "$REHEARSAL" sweep scenarios/ci/*.toml --seeds 1..=20 --protocol repaired \
        --variant table-transitions-only --variant exit-requested-conductor-only --quiet --force --out "$out/pr/strict" || code=$?
    echo "ci-local: PR lane, strict suite exited $code; results in $out/pr/strict" >&2
    [ "$verdict" -ne 0 ] || verdict=$code
    code=0
    "$REHEARSAL" sweep scenarios/ci/*.toml scenarios/ci/faults/*.toml --seeds 1..=5 --baseline scenarios/ci/baseline.txt \
        --quiet --force --out "$out/pr/seeds" || code=$?
    echo "ci-local: PR lane, baselined suite exited $code; results in $out/pr/seeds" >&2
    [ "$verdict" -ne 0 ] || verdict=$code
fi

if [[ " $lanes " == *" nightly "* ]]; then
    night=${NIGHT:-$(date -u +%F)}
    if [ -n "${SUITE:-}" ]; then
        suite=$SUITE
        baseline=${BASELINE:-}
    else
        suite="$(setting SUITE) --seeds night:$night:${NIGHT_SEEDS:-$(setting NIGHT_SEEDS)}"
        baseline=${BASELINE:-$(setting NIGHT_BASELINE)}
    fi
    if [ -z "$suite" ]; then
        echo "ci-local: no SUITE, and none found in $workflow" >&2
        exit 2
    fi
    # Shards judged against the baseline keep known failures as lines (not when blessing it).
    shard_baseline=()
    [ -z "$baseline" ] || [ "${BLESS:-}" = 1 ] || shard_baseline=(--baseline "$baseline")
    pids=()
    for i in $(seq 1 "$shards"); do
        # shellcheck disable=SC2086 # the suite is word-split on purpose, as in the workflow
        "$REHEARSAL" sweep $suite "${shard_baseline[@]}" --shard "$i/$shards" --jobs "${JOBS:-1}" --quiet --force --out "$out/shard-$i" \
            >"$out/logs/shard-$i.log" 2>&1 &
        pids+=("$!")
    done
    for i in $(seq 1 "$shards"); do
        code=0
        wait "${pids[$((i - 1))]}" || code=$?
        # 1 is a failing pair, for the merge to judge; anything else is the shard's own trouble.
        if [ "$code" -gt 1 ]; then
            echo "ci-local: shard $i/$shards exited $code (see $out/logs/shard-$i.log)" >&2
        fi
    done
    merged=()
    for i in $(seq 1 "$shards"); do
        # Only the shards that left a folder, as the workflow's merge sees only uploaded artifacts.
        [ -d "$out/shard-$i" ] && merged+=("$out/shard-$i")
    done
    judge=()
    if [ -n "$baseline" ]; then
        judge=(--baseline "$baseline" --require-faults-fired --expire-after "${EXPIRE_AFTER:-7}")
        if [ "${BLESS:-}" = 1 ]; then
            judge+=(--bless-modes)
        elif [ "${RECORD:-}" = 1 ]; then
            judge+=(--record-night)
        fi
    fi
    code=0
    "$REHEARSAL" merge "${merged[@]}" "${judge[@]}" --force --out "$out/merged" || code=$?
    echo "ci-local: nightly lane, merge of $shards shard(s) exited $code; results in $out/merged" >&2
    [ "$verdict" -ne 0 ] || verdict=$code
fi
exit "$verdict"
