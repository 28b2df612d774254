#!/usr/bin/env bash
# ACT against RAN and MAN on equal budgets (issue 5's evidence).
#   bench/compare.sh [BUDGET] [CAMPAIGN.yaml]
# Prints the coverage table, the ACT/RAN ratio at k=16 and writes
# out/compare/coverage.png (Fig. 8) and out/compare/compare.json.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-100000}
campaign=${2:-}
mkdir -p out/compare
go build -o bin/actfuzz ./cmd/actfuzz
bin/actfuzz compare $campaign --budget "$budget" --plot out/compare/coverage.png --json > out/compare/compare.json
python3 - out/compare/compare.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["methods"]
ks = sorted(int(k) for k in m["act"]["regions"])
print("%6s" % "k" + "".join("%14s" % x for x in m))
for k in ks:
    print("%6d" % k + "".join("%14d" % m[x]["regions"][str(k)] for x in m))
for k in (16, 128):
    print("ACT/RAN at k=%d: %.2fx, ACT/MAN: %.2fx" % (k, m["act"]["regions"][str(k)] / max(1, m["ran"]["regions"][str(k)]),
          m["act"]["regions"][str(k)] / max(1, m["man"]["regions"][str(k)])))
bad = [k for k in ks if m["act"]["regions"][str(k)] < max(m["ran"]["regions"][str(k)], m["man"]["regions"][str(k)])]
print("ACT >= RAN and MAN at every k:", "yes" if not bad else "no, at k=%s" % bad)
for x in m:
    print("%s: %d sims in %.0f s (%.0f sims/s)" % (x, m[x]["sims"], m[x]["wall_s"], m[x]["sims"] / m[x]["wall_s"]))
PY
