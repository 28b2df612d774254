#!/usr/bin/env bash
# Simulator and campaign throughput: the default scenario (ns/op, allocs/op,
# events/s) and campaign sims/s with 1 and 2 workers.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./netenv/ -run '^$' -bench DefaultScenario -benchmem -benchtime 300x
go test ./act/ -run '^$' -bench DefaultCampaign -benchtime 2x
