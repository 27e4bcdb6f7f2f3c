#!/usr/bin/env bash
# bench/scripts/results.sh OUT: the benchmark results file (make bench).
# Every section is one benchmark command's output as printed, under its
# title. BENCH_ONLY (comma-separated section keys, e.g. "calls,codecs")
# runs only those sections and keeps the others as OUT already has them,
# each under its own dated first line; empty runs them all.
# Environment (from the Makefile): GO, SPEECH, CORPUS, BENCH_PRESETS,
# BENCH_NARROW_PRESETS, CALLS_BEFORE, SOAK_OUT, FUZZ_OUT.
set -euo pipefail
out=$1
only=",${BENCH_ONLY:-},"

# key|title|command
sections=(
  "asr|Speech recognition (bench/cmd/asrbench)|$GO run ./bench/cmd/asrbench -serial -speech $SPEECH"
  "http|HTTP (bench/cmd/httpbench)|$GO run ./bench/cmd/httpbench -speech $SPEECH/pocketsphinx-goforward.wav"
  "openai|OpenAI-compatible door against /v2 (bench/cmd/openaibench)|$GO run ./bench/cmd/openaibench -speech $SPEECH/pocketsphinx-goforward.wav"
  "store|Stores: bbolt and PostgreSQL (bench/cmd/storebench)|$GO run ./bench/cmd/storebench"
  "seal|Encryption at rest against none (bench/cmd/sealbench)|nice $GO run ./bench/cmd/sealbench -speech $SPEECH"
  "livegap|Live finals against batch (bench/cmd/livegap)|$GO run ./bench/cmd/livegap -speech $SPEECH -renditions pcm16k,mulaw8k,alaw8k,mulaw8k-mag,alaw8k-mag"
  "livegap-corpus|Live finals against batch, corpus tuning subset (bench/cmd/livegap -corpus)|$GO run ./bench/cmd/livegap -corpus $CORPUS -every 15 -renditions pcm16k,mulaw8k"
  "livegap-heldout|Live finals against batch, corpus readers held out, and stock pocketsphinx_batch on them (bench/cmd/livegap -corpus -held-out -stock)|$GO run ./bench/cmd/livegap -corpus $CORPUS -every 15 -held-out -stock -revised -renditions pcm16k,mulaw8k,alaw8k"
  "livegap-record|Stored record (live finals or batch, stretch by stretch) against both, corpus readers held out (bench/cmd/livegap -corpus -held-out -record)|$GO run ./bench/cmd/livegap -corpus $CORPUS -every 15 -held-out -record -renditions pcm16k,mulaw8k,alaw8k"
  "presets|Engine presets, 8 kHz mu-law (bench/cmd/livegap)|$GO run ./bench/cmd/livegap -speech $SPEECH -renditions mulaw8k -presets $BENCH_PRESETS"
  "live|Live sessions (bench/cmd/livebench)|$GO run ./bench/cmd/livebench -speech $SPEECH -presets $BENCH_NARROW_PRESETS"
  "ack|Live acknowledgments (bench/cmd/ackbench)|$GO run ./bench/cmd/ackbench -speech $SPEECH"
  "sip|SIP door (bench/cmd/sipbench)|$GO run ./bench/cmd/sipbench -speech $SPEECH"
  "whip|WebRTC door (bench/cmd/whipbench)|$GO run ./bench/cmd/whipbench -speech $SPEECH"
  "codecs|Call doors by codec (bench/cmd/codecbench)|$GO run ./bench/cmd/codecbench -speech $SPEECH"
  "calls|Conversational calls, before and after (bench/cmd/callbench -before $CALLS_BEFORE)|$GO run ./bench/cmd/callbench -speech $SPEECH -corpus $CORPUS -before $CALLS_BEFORE"
  "dtmf|In-band DTMF on real speech (bench/cmd/dtmfbench)|$GO run ./bench/cmd/dtmfbench -speech $SPEECH -corpus $CORPUS"
)

# old TITLE: the section of that title in the current file, without its
# heading ("" when it has none).
old() {
  [ -f "$out" ] || return 0
  awk -v t="## $1" '$0 == t { on = 1; next } on && /^## / { exit } on' "$out"
}

{
  echo "# Benchmark results"
  echo
  if [ "$only" = ",," ]; then
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $($GO env GOVERSION)"
  else
    # A partial run keeps the file's dated lines and says what it re-ran.
    awk 'NR >= 3 && /^## / { exit } NR >= 3 && NF { print; print "" }' "$out"
    echo "Re-run on $(date -u '+%Y-%m-%d %H:%M UTC') ($(nproc) CPUs, $($GO env GOVERSION)): ${BENCH_ONLY}; every other section is from the run above or its own earlier re-run, as its first line dates it."
  fi
  echo
  for s in "${sections[@]}"; do
    IFS='|' read -r key title cmd <<<"$s"
    if [ "$only" = ",," ] || [[ "$only" == *",$key,"* ]]; then
      echo "## $title"
      echo
      $cmd
      echo
    elif kept=$(old "$title") && [ -n "$kept" ]; then
      echo "## $title"
      printf '%s\n' "$kept"
      echo
    fi
  done
  if [ -f "$SOAK_OUT" ]; then echo "## Last soak ($SOAK_OUT, from make soak)"; echo; cat "$SOAK_OUT"; echo; fi
  if [ -f "$FUZZ_OUT" ]; then echo "## Last fuzz run ($FUZZ_OUT, from make fuzz)"; echo; cat "$FUZZ_OUT"; fi
} > "$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
