#!/usr/bin/env bash
# Runs every Fuzz target of the module for FUZZTIME each and writes a markdown
# report to $1 (default bench/FUZZ.md). With FUZZ_SAVE=1 it also copies up to
# FUZZ_KEEP inputs per target from the fuzz cache into the package's
# testdata/fuzz/<Target>/, so that `make test` replays them as seed corpora.
set -euo pipefail
out=${1:-bench/FUZZ.md}
fuzztime=${FUZZTIME:-20s}
keep=${FUZZ_KEEP:-8}
go=${GO:-go}
module=$($go list -m)
cache=$($go env GOCACHE)/fuzz
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
failed=0
{
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $($go env GOVERSION), ${fuzztime} per target"
  echo
  echo "| package | target | result | execs | corpus (new interesting) |"
  echo "|---|---|---|---|---|"
} > "$tmp"
for f in $(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do
  dir=$(dirname "$f")
  pkg=${dir#./}
  for t in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
    echo "== $pkg $t ($fuzztime)" >&2
    log=$($go test "./$pkg" -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" 2>&1) && res=pass || { res=FAIL; failed=1; }
    echo "$log" | tail -3 >&2
    last=$(echo "$log" | grep -E '^fuzz: elapsed' | tail -1 || true)
    execs=$(echo "$last" | sed -nE 's/.*execs: ([0-9]+).*/\1/p')
    interesting=$(echo "$last" | sed -nE 's/.*new interesting: ([0-9]+) \(total: ([0-9]+)\).*/\2 (\1)/p')
    echo "| $pkg | $t | $res | ${execs:-?} | ${interesting:-?} |" >> "$tmp"
    if [ "${FUZZ_SAVE:-0}" = 1 ] && [ -d "$cache/$module/$pkg/$t" ]; then
      mkdir -p "$dir/testdata/fuzz/$t"
      for c in $(ls -t "$cache/$module/$pkg/$t" | sed -n "1,${keep}p"); do
        cp "$cache/$module/$pkg/$t/$c" "$dir/testdata/fuzz/$t/$c"
      done
    fi
  done
done
mv "$tmp" "$out"
trap - EXIT
cat "$out"
exit $failed
