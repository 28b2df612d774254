#!/usr/bin/env bash
# The ACT paper's use cases 1-3 under --profile linux-3.10 (examples/*.yaml).
#   bench/usecases.sh [BUDGET]
set -uo pipefail
cd "$(dirname "$0")/.."
budget=${1:-20000}
go build -o bin/actfuzz ./cmd/actfuzz
for c in huge-cwnd cubic-aggressive undo-increase; do
  rm -rf "out/usecase-$c"
  bin/actfuzz run "examples/$c.yaml" --budget "$budget" --out "out/usecase-$c" --quiet --json > "out/usecase-$c.json"
  echo "$c: exit $? ($(python3 -c "import json;d=json.load(open('out/usecase-$c.json'));print(sum(f['count'] for f in d['findings'] or []),'hits in',len(d['findings'] or []),'groups over',d['report']['sims'],'sims')"))"
done
