#!/bin/sh
# Branch counts of the symbolic back-end (netenv/symbolic) beside SEIB's
# Table 2 (udp4, n = 1…4) and for tcp-bulk over dmax = 4…16384 ms (SEIB
# Fig. 9), as Markdown tables on stdout; progress on stderr.
#
# usage: bench/sym.sh [PER-CELL-TIME-LIMIT] [MAX-N]
#   PER-CELL-TIME-LIMIT  wall-time bound of one exploration (default 120s);
#                        a cell that hits it shows ">branches so far"
#   MAX-N                largest udp4 window (default 4)
#
# One exploration runs at a time (one core).
set -eu
cd "$(dirname "$0")/.."
limit=${1:-120s}
maxn=${2:-4}
echo "# actfuzz symbolic back-end: branch counts ($(date -u +%Y-%m-%d), $(go version | cut -d' ' -f3), per-cell limit $limit)"
echo
GOMAXPROCS=1 go run ./netenv/symbolic/cmd/symbench --table --n "$maxn" --time-limit "$limit"
