#!/bin/bash
# Pooled batch of docs/experiments/server-load-default.md: tailroute (the
# default: server load polled within the poll budget), tailroute-nopoll (no
# server signal) and the oracle (docs/experiments/batch.sh with these three).
#
# Usage: server-load-default.sh BIN OUT CLIENTS "SEEDS" "CELLS" (runs; resumes)
#        server-load-default.sh pool HLOGPOOL OUT/cN              (pools)
P=tailroute,tailroute-nopoll,oracle
B=$(dirname "$0")/batch.sh
if [ "$1" = pool ]; then exec "$B" pool "$2" "$3" $P; fi
exec "$B" "$1" "$2" "$3" "$4" "$5" $P
