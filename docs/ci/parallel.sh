#!/bin/sh
# A hunt split over 4 local processes with GNU parallel, then merged into what one process
# finds. Run from the repository root: `sh docs/ci/parallel.sh` (exit 1: a test fails).
# `tests/shard.rs` runs this script.
set -e
rm -rf shards
parallel fgvt hunt fixtures/pair_snapshot/hunt.json --seed 1 --jobs 1 --shard {}/4 -o shards/ ::: 1 2 3 4
fgvt hunt fixtures/pair_snapshot/hunt.json --seed 1 --merge shards/
