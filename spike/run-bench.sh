#!/usr/bin/env bash
# The Effect 4 spike's bench (issue 27): v3 (the repository's modules and its own agents probe) and v4 (the
# port under spike/effect4), interleaved in one sitting, each case in a fresh process, on the pinned Node 22.
#
#   bash spike/run-bench.sh [rounds=3] [out=spike/results/<utc time>.jsonl]
#   ROWS=agents bash spike/run-bench.sh 2     # only the many-agents rows (the decisive ones)
#
# Rows per round, the order of v3/v4 alternating between rounds:
#   agents: 100 agents, one chunk per batch, JSONL, 2 turns of 100 chunks and 2 turns of 1,000 chunks:
#           v3-full (scratchpad/many-agents.ts: real agents), v3-mini and v4-mini (the same mini agent on
#           both sides: spike/effect3/probe.ts, spike/effect4/bench/probe.ts)
#   streams: SSE decode, end to end over loopback, append+assembler, Session.append (streams.ts, each side)
# Then `node spike/summarize.ts <out>` prints the medians and v4/v3 ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
ROUNDS="${1:-3}"
OUT="${2:-spike/results/$(date -u +%Y%m%dT%H%M%SZ).jsonl}"
ROWS="${ROWS:-agents streams}"
mkdir -p "$(dirname "$OUT")"
node --version | grep -q '^v22\.' || { echo "needs the pinned Node 22 (npm ci)"; exit 2; }
load() { printf '{"load":"%s","at":"%s"}\n' "$(cut -d' ' -f1-3 /proc/loadavg)" "$(date -u +%H:%M:%S)" >> "$OUT"; }
tag() { sed -e "s/^{/{\"round\":$1,/" >> "$OUT"; }
v3() { node --import tsx spike/effect3/main.ts "$@"; }
v4() { node --import tsx spike/effect4/bench/main.ts "$@"; }
echo "writing $OUT"
for round in $(seq 1 "$ROUNDS"); do
  load
  for rows in $ROWS; do
    if [ "$rows" = agents ]; then
      for chunks in 100 1000; do
        args=(--agents 100 --turns 2 --chunks "$chunks" --batch 1)
        if [ $((round % 2)) -eq 1 ]; then
          v3 --case full "${args[@]}" | tag "$round"; v3 --case mini "${args[@]}" | tag "$round"; v4 "${args[@]}" | tag "$round"
        else
          v4 "${args[@]}" | tag "$round"; v3 --case mini "${args[@]}" | tag "$round"; v3 --case full "${args[@]}" | tag "$round"
        fi
      done
    else
      if [ $((round % 2)) -eq 1 ]; then
        node --import tsx spike/effect3/streams.ts | tag "$round"; node --import tsx spike/effect4/bench/streams.ts | tag "$round"
      else
        node --import tsx spike/effect4/bench/streams.ts | tag "$round"; node --import tsx spike/effect3/streams.ts | tag "$round"
      fi
    fi
  done
  echo "round $round done"
done
load
node --import tsx spike/summarize.ts "$OUT"
