#!/usr/bin/env bash
# Plants each bug of patches/ (one small patch per bug class) in a temporary worktree of HEAD, runs
# the simulator there and records how many seeds fail, then removes the worktree. The engine under
# test is never touched: everything happens in the temporary copy.
#
# Usage: scripts/plant-bugs/run.sh [SEEDS=1000] [PATCH-NAME...]
# Results: scripts/plant-bugs/RESULTS.md or $PLANT_RESULTS (one row per bug, appended as each finishes);
#          the full simulator output of each bug in scripts/plant-bugs/out/NAME.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
seeds=${1:-1000}
shift || true
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for p in "$here"/patches/*.patch; do names+=("$(basename "$p" .patch)"); done
fi
modules=$(readlink -f "$repo/node_modules")
out="$here/out"
mkdir -p "$out"
results="${PLANT_RESULTS:-$here/RESULTS.md}"
{
  echo "# Planted bugs: seeds caught by the simulator"
  echo
  echo "Each bug class is one patch in \`patches/\`, applied to a temporary worktree of commit $(git -C "$repo" rev-parse --short HEAD);"
  echo "\`node bin/weir.mjs sim --seeds $seeds\` runs there (seeds 1..$seeds, every scenario and mode). Started $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) shared cores."
  echo
  echo "| planted bug | seeds failing | checkers that caught it (seeds) | wall time |"
  echo "|---|---|---|---|"
} > "$results"
for name in "${names[@]}"; do
  wt=$(mktemp -d /tmp/weir-plant-XXXXXX)
  rmdir "$wt"
  git -C "$repo" worktree add -q --detach "$wt" HEAD
  ln -s "$modules" "$wt/node_modules"
  if ! git -C "$wt" apply "$here/patches/$name.patch"; then
    echo "| $name | patch does not apply | | |" >> "$results"
    git -C "$repo" worktree remove --force "$wt"
    continue
  fi
  start=$(date +%s)
  # bin/weir.mjs runs the compiled CLI: build the patched engine first.
  (cd "$wt" && nice -n 10 node scripts/build.mjs && nice -n 10 node bin/weir.mjs sim --seeds "$seeds") > "$out/$name.txt" 2>&1
  secs=$(( $(date +%s) - start ))
  failed=$(grep -c '^  replay:' "$out/$name.txt")
  checkers=$(grep -o '^  FAILED [a-z-]*' "$out/$name.txt" | sort | uniq -c | sort -rn | awk '{printf "%s %s, ", $3, $1}')
  echo "| $name | $failed of $seeds | ${checkers%, } | ${secs} s |" >> "$results"
  git -C "$repo" worktree remove --force "$wt"
done
echo >> "$results"
echo "Finished $(date -u '+%Y-%m-%d %H:%M UTC')." >> "$results"
