#!/bin/bash
# The zone cells (issue 43), seeds $1, 4 clients, 5000 ops; policies rotated per seed as
# batch.sh does. OUT (default /tmp/zones/c4), YL (the ycsb-lite binary, default /tmp/yl)
# and CELLS (default: all four) may be set; one run at a time.
OUT=${OUT:-/tmp/zones/c4}
YL=${YL:-/tmp/yl}
P=(tailroute tailroute-rack rack-aware)
for s in $1; do for c in ${CELLS:-zones zone-slow zone-pause zones-spread}; do
  d=$OUT/$c/seed$s; [ -f $d/report.json ] && continue
  rot=$(( s % 3 )); pol=("${P[@]:$rot}" "${P[@]:0:$rot}")
  mkdir -p $d
  (cd $d && $YL -scenario $c -clients 4 -ops 5000 -seed $s -compare $(IFS=,; echo "${pol[*]}") -out . -plots=false > table.txt 2> log.txt)
  echo "$(date +%T) $c seed$s load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/batch.log
done; done
