#!/usr/bin/env bash
# rehearsal's speed against the SimPy peer on the same fleet (issue 17), measured side by side:
# the two run in turn ROUNDS times (a slow moment of the machine hits both alike) and the
# fastest of each is kept. rehearsal's figure is `bench --overhead`'s run (the whole run of
# scenarios/bench/fleet-day.toml: 32 musicians, 24 simulated hours); the peer's is
# `shared/peers/simpy_fleet.py 32 24` (pip install simpy). Both are simulated seconds per
# wall second.
#
# Usage: scripts/peer-ratio.sh [ROUNDS] [REHEARSAL_BINARY] [PEER_SCRIPT]
set -euo pipefail
rounds=${1:-3}
bin=${2:-${CARGO_TARGET_DIR:-target}/release/rehearsal}
peer=${3:-../shared/peers/simpy_fleet.py}
best_sim=0
best_peer=0
for _ in $(seq "$rounds"); do
    sim=$("$bin" bench scenarios/bench/fleet-day.toml --overhead --repeat 1 | sed -n 's/^speed *\([0-9]*\)x.*/\1/p')
    ours=$(python3 "$peer" 32 24 | sed -n 's/.*speed_x_real=\([0-9]*\).*/\1/p')
    echo "rehearsal ${sim}x real time, SimPy peer ${ours}x" >&2
    ((sim > best_sim)) && best_sim=$sim
    ((ours > best_peer)) && best_peer=$ours
done
awk -v s="$best_sim" -v p="$best_peer" 'BEGIN { printf "rehearsal %dx real time, SimPy peer %dx: rehearsal is %.1fx the peer (fastest of each)\n", s, p, s / p }'
