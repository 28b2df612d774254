#!/usr/bin/env bash
# bench/findings-size.sh BIN OUT [CAMPAIGN.yaml] [BUDGET]: one campaign of
# BUDGET simulations (default 2000) by BIN (an actfuzz binary: build one
# from main for the before, one from the branch for the after) into OUT,
# then what it wrote: the whole directory and each part, in bytes, the
# findings' and traces' file counts, the wall time and the load.
set -eu
bin=${1:?actfuzz binary} out=${2:?output directory} camp=${3:-} budget=${4:-2000}
[ ! -e "$out" ] || { echo "findings-size.sh: $out exists" >&2; exit 2; }
echo "load before: $(cat /proc/loadavg)"
start=$(date +%s)
s=0; "$bin" run $camp --budget "$budget" --out "$out" --quiet >/dev/null || s=$?
[ "$s" -le 1 ] || { echo "findings-size.sh: $bin exited $s" >&2; exit 3; }
echo "load after: $(cat /proc/loadavg); wall $(( $(date +%s) - start )) s"
echo "total: $(du -sh "$out" | cut -f1)"
du -s --apparent-size -B1 "$out"/* | sort -rn
for d in findings traces; do
  [ -d "$out/$d" ] || continue
  for ext in json png csv csv.gz; do
    n=$(find "$out/$d" -name "*.$ext" | wc -l)
    [ "$n" -eq 0 ] || echo "$d: $n .$ext files, $(find "$out/$d" -name "*.$ext" -printf '%s\n' | awk '{s+=$1} END {print s}') bytes"
  done
done
