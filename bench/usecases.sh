#!/usr/bin/env bash
# The ACT paper's use cases as benchmarks (issue 21): huge-cwnd,
# undo-increase, cubic-aggressive (examples/*.yaml, linux-3.10) and the
# `make run` mix, over SEEDS campaign seeds at each budget, for each mode
# (paper: ACT with ACT §3's step schedule; adaptive: ACT with the adaptive
# schedule; directed: adaptive plus the directed step; ran: uniform random). Prints, per condition, the found-rate and
# the median simulations to the first hit (median_hit over the seeds that
# found it; median_all counts a miss as budget+1). A run stops once every
# condition of its campaign has a hit.
#   bench/usecases.sh [BUDGETS] [MODES] [SEEDS]
#   e.g. bench/usecases.sh 2000 paper,adaptive 5
# Defaults: budgets 2000,10000, modes paper,adaptive,directed,ran, 5 seeds. That is
# hours of simulation on a small machine: pick a subset there.
set -euo pipefail
cd "$(dirname "$0")/.."
budgets=${1:-2000,10000}
modes=${2:-paper,adaptive,directed,ran}
seeds=${3:-5}
cases=${USECASES:-"examples/huge-cwnd.yaml examples/undo-increase.yaml examples/cubic-aggressive.yaml examples/make-run.yaml"}
echo "# $(date -u +%FT%TZ) $(git describe --always --dirty 2>/dev/null) on $(nproc) cores; load:$(uptime | sed 's/.*load average//')"
# shellcheck disable=SC2086
go run ./bench/usecases -seeds "$seeds" -budgets "$budgets" -modes "$modes" ${WORKERS:+-workers "$WORKERS"} $cases
echo "# done $(date -u +%FT%TZ); load:$(uptime | sed 's/.*load average//')"
