#!/usr/bin/env python3
"""Where a function's time goes, from a `perf script` of a call-graph profile (issue 17).

Reads `perf script` output on stdin and prints, for every sample whose stack holds FUNC, the
share of all samples spent under FUNC, split by the next DEPTH frames below it (the callees).
Shares are of the whole profile, so figures of two profiles compare as "per cent of the run".

    perf record -F 4000 --call-graph fp -o perf.data rehearsal --quiet run SCENARIO --out DIR
    perf script -i perf.data | scripts/perf-shares.py Engine::run_with_progress 1

Build with frame pointers for whole stacks:
    RUSTFLAGS="-C force-frame-pointers=yes" CARGO_PROFILE_RELEASE_DEBUG=true cargo build --release
"""
import collections
import re
import sys


def stacks(lines):
    """Yields each sample's stack, outermost frame first."""
    frames = []
    for line in lines:
        if not line.strip():
            if frames:
                yield list(reversed(frames))
            frames = []
        elif line[0] in " \t":
            parts = line.strip().split(" ", 1)
            if len(parts) == 2:
                frames.append(re.sub(r"\+0x[0-9a-f]+$", "", re.sub(r" \(.*\)$", "", parts[1])))
    if frames:
        yield list(reversed(frames))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root, depth, rows = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1, 40
    total, under, below = 0, 0, collections.Counter()
    for frames in stacks(sys.stdin):
        total += 1
        for i, frame in enumerate(frames):
            if root in frame:
                under += 1
                below[tuple(frames[i + 1 : i + 1 + depth]) or ("<self>",)] += 1
                break
    if total == 0:
        sys.exit("no samples on stdin")
    print(f"{total} samples; under {root}: {under} ({100 * under / total:.1f} %)")
    for callees, count in below.most_common(rows):
        print(f"{100 * count / total:6.2f} %  {' > '.join(c[:90] for c in callees)}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        pass
