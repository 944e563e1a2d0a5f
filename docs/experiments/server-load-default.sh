#!/bin/bash
# Pooled batch of docs/experiments/server-load-default.md: tailroute (the
# default: server load polled within the poll budget), tailroute-nopoll (no
# server signal) and the oracle, side by side in one ycsb-lite process per
# cell and seed, the policies' order rotated per seed; then every cell's runs
# pooled per policy with cmd/hlogpool.
#
#   go build -o /tmp/yl ./cmd/ycsb-lite && go build -o /tmp/hlogpool ./cmd/hlogpool
#   docs/experiments/server-load-default.sh /tmp/yl out 4 "1 2 3 4 5 6 7 8 9 10 11 12" "$CELLS"
#   docs/experiments/server-load-default.sh pool /tmp/hlogpool out/c4
#
# Usage: server-load-default.sh BIN OUT CLIENTS "SEEDS" "CELLS" (runs; resumes)
#        server-load-default.sh pool HLOGPOOL OUT/cN              (pools)
if [ "$1" = pool ]; then
  HP=$2; DIR=$3
  for c in "$DIR"/*/; do
    c=$(basename "$c")
    for p in tailroute tailroute-nopoll oracle; do
      echo "$c $p: $($HP "$DIR"/$c/seed*/$p-run.hlog | tr '\n' ' ')"
    done
  done
  exit 0
fi
BIN=$1; OUT=$2; CLIENTS=$3; SEEDS=$4; CELLS=$5
declare -A CELL
CELL[steady]="-scenario steady"
CELL[slow-node]="-scenario slow-node"
CELL[gc-pauses]="-scenario gc-pauses"
for u in 45 70; do for t in 10ms 100ms 500ms; do
  CELL[bimodal-u$u-t$t]="-scenario bimodal -utilization 0.$u -fluctuation $t -threads 64"
done; done
CELL[demand-skew]="-scenario bimodal -utilization 0.70 -fluctuation 100ms -threads 64 -demand-skew 20/80"
CELL[node-down]="-scenario node-down -utilization 0.60 -threads 64"
CELL[workload-shift]="-scenario workload-shift -utilization 0.45 -threads 64"
CELL[error-node-50]="-scenario error-node -error-rate 0.5"
CELL[error-node-100]="-scenario error-node -error-rate 1 -retries 2 -fault-until 0.5"
CELL[two-slow]="-scenario two-slow"
CELL[flapping]="-scenario flapping -retries 2"
CELL[recovering]="-scenario recovering"
P=(tailroute tailroute-nopoll oracle)
for s in $SEEDS; do
  for c in $CELLS; do
    [ "$c" = demand-skew ] && [ "$CLIENTS" -lt 3 ] && continue
    d=$OUT/c$CLIENTS/$c/seed$s
    [ -f $d/report.json ] && continue
    mkdir -p $(dirname $d)
    k=$((s % 3)); order="${P[$k]},${P[$(((k+1)%3))]},${P[$(((k+2)%3))]}"
    cl=""; [ "$CLIENTS" -gt 1 ] && cl="-clients $CLIENTS"
    echo "$BIN -compare $order ${CELL[$c]} $cl -ops 5000 -seed $s -plots=false -out $d" >> $OUT/commands.txt
    $BIN -compare $order ${CELL[$c]} $cl -ops 5000 -seed $s -plots=false -out $d > $d.log 2>&1 || echo "FAIL $c $s" >> $OUT/failures.txt
  done
done
