#!/bin/sh
# Where the compiled core spends its time: a per-function perf profile of fixed-depth searches over
# scripts/bench_positions.txt (python -m scripts.bench_core_ratio --only new), Linux with perf installed.
#
#   scripts/profile_core.sh [DEPTH] [REV]     # default: depth 14, this checkout's core
#
# The core is built twice into a temporary folder with this checkout's setup.py: with
# -fno-inline (each helper function its own row: evaluation, move generation, the table's memory
# reads in load_word, ordering, the solver's max_plies_left) and as shipped (inlined: the real
# split between negamax and what stays out of line). Only the core's own samples are shown, as
# percentages of them: the kernel's page faults come from making each fresh engine's table (not
# timed) and Python's from setting the searches up.
set -eu
depth=${1:-14}
rev=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for kind in noinline shipped; do
    mkdir -p "$tmp/$kind/agent"
    if [ -n "$rev" ]; then
        for name in $(git -C "$root" ls-tree --name-only "$rev:agent" | grep '\.[ch]$'); do
            git -C "$root" show "$rev:agent/$name" > "$tmp/$kind/agent/$name"
        done
    else
        cp "$root"/agent/*.c "$root"/agent/*.h "$tmp/$kind/agent/"
    fi
    cp "$root/setup.py" "$tmp/$kind/"
    flags="-g -fno-omit-frame-pointer"
    [ "$kind" = noinline ] && flags="$flags -fno-inline -fno-ipa-cp"
    (cd "$tmp/$kind" && CFLAGS="$flags" "$python" setup.py -q build_ext --inplace >/dev/null)
    so=$(ls "$tmp/$kind"/agent/_core*.so)
    echo "== $kind build ($flags), depth $depth"
    (cd "$root" && perf record -q -F 2000 -o "$tmp/$kind.data" "$python" -m scripts.bench_core_ratio --only new \
        --new "$so" --depth "$depth" --rounds 1) | tail -3
    perf report -q -i "$tmp/$kind.data" --no-children --dsos "$(basename "$so")" --sort symbol --stdio \
        --percentage relative 2>/dev/null | grep '%' | head -20
done
