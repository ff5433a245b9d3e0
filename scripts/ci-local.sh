#!/usr/bin/env bash
# Runs CI's sharded sweep (.github/workflows/rehearsal.yml) on this machine: the N shards at
# once as background processes, then `rehearsal merge`; exits with the merge's code (0 pass,
# 1 a pair failed or a shard's results are missing, 2 shards of different suites, 3 harness).
#
# Usage: scripts/ci-local.sh [N] [OUT]      (N shards, default 4; OUT default reports/ci-local)
# Environment:
#   SUITE      scenarios and seeds, word-split (default: the workflow's SUITE, so the same suite)
#   REHEARSAL  the binary (default: a release build of this checkout, built first)
#   JOBS       --jobs of each shard (default 1: the N shards already run side by side)
# Shards write OUT/shard-I/ (their stdout and stderr in OUT/shard-I.log), the merge OUT/merged/;
# what an earlier run of the script wrote there is replaced (--force).
set -euo pipefail
cd "$(dirname "$0")/.."
shards=${1:-4}
out=${2:-reports/ci-local}
suite=${SUITE:-$(sed -n 's/^  SUITE: *//p' .github/workflows/rehearsal.yml)}
if [ -z "$suite" ]; then
    echo "ci-local: no SUITE, and none found in .github/workflows/rehearsal.yml" >&2
    exit 2
fi
if [ -z "${REHEARSAL:-}" ]; then
    cargo build --release --locked --quiet
    REHEARSAL=${CARGO_TARGET_DIR:-target}/release/rehearsal
fi
mkdir -p "$out"
pids=()
for i in $(seq 1 "$shards"); do
    # shellcheck disable=SC2086 # the suite is word-split on purpose, as in the workflow
    "$REHEARSAL" sweep $suite --shard "$i/$shards" --jobs "${JOBS:-1}" --quiet --force --out "$out/shard-$i" \
        >"$out/shard-$i.log" 2>&1 &
    pids+=("$!")
done
for i in $(seq 1 "$shards"); do
    code=0
    wait "${pids[$((i - 1))]}" || code=$?
    # 1 is a failing pair, for the merge to report; anything else is the shard's own trouble.
    if [ "$code" -gt 1 ]; then
        echo "ci-local: shard $i/$shards exited $code (see $out/shard-$i.log)" >&2
    fi
done
merged=()
for i in $(seq 1 "$shards"); do
    # Only the shards that left a folder, as the workflow's merge sees only uploaded artifacts.
    [ -d "$out/shard-$i" ] && merged+=("$out/shard-$i")
done
code=0
"$REHEARSAL" merge "${merged[@]}" --force --out "$out/merged" || code=$?
echo "ci-local: merge of $shards shard(s) exited $code; results in $out/merged" >&2
exit "$code"
