#!/bin/bash
# Pooled batches of docs/experiments: the given policies side by side in one
# ycsb-lite process per cell and seed, their order rotated per seed (seed mod
# the number of policies); then each cell's runs pooled per policy with
# cmd/hlogpool. The cells are the suite's (cmd/ycsb-suite/cells.go).
#
#   go build -o /tmp/yl ./cmd/ycsb-lite && go build -o /tmp/hlogpool ./cmd/hlogpool
#   docs/experiments/batch.sh /tmp/yl out 4 "1 2 3 4 5 6 7 8 9 10 11 12" "$CELLS" tailroute,tailroute+hedge
#   docs/experiments/batch.sh pool /tmp/hlogpool out/c4 tailroute,tailroute+hedge
#
# Usage: batch.sh BIN OUT CLIENTS "SEEDS" "CELLS" POLICIES   (runs; resumes)
#        batch.sh pool HLOGPOOL OUT/cN POLICIES              (pools: hlogpool -batch)
# Run several at once with disjoint SEEDS to use more cores.
if [ "$1" = pool ]; then
  # a Markdown table per cell: each policy pooled over the seeds in which every policy ran, its
  # p99 and p99.9 over the first policy's
  exec "$2" -batch "$3" -policies "$4"
fi
BIN=$1; OUT=$2; CLIENTS=$3; SEEDS=$4; CELLS=$5; IFS=, read -ra P <<< "$6"
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
n=${#P[@]}
for s in $SEEDS; do
  for c in $CELLS; do
    [ "$c" = demand-skew ] && [ "$CLIENTS" -lt 3 ] && continue
    d=$OUT/c$CLIENTS/$c/seed$s
    [ -f $d/report.json ] && continue
    mkdir -p $(dirname $d)
    k=$((s % n)); order=""
    for ((i = 0; i < n; i++)); do order+="${P[$(((k + i) % n))]},"; done
    order=${order%,}
    cl=""; [ "$CLIENTS" -gt 1 ] && cl="-clients $CLIENTS"
    echo "$BIN -compare $order ${CELL[$c]} $cl -ops 5000 -seed $s -plots=false -out $d" >> $OUT/commands.txt
    $BIN -compare $order ${CELL[$c]} $cl -ops 5000 -seed $s -plots=false -out $d > $d.log 2>&1 || echo "FAIL $c $s" >> $OUT/failures.txt
  done
done
