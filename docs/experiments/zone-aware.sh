#!/bin/bash
# zone cells, seeds $1, 4 clients, 5000 ops; policies rotated per seed as batch.sh does
OUT=/tmp/zones/c4
P=(tailroute tailroute-rack rack-aware)
for s in $1; do for c in zones zone-slow zone-pause zones-spread; do
  d=$OUT/$c/seed$s; [ -f $d/report.json ] && continue
  rot=$(( s % 3 )); pol=("${P[@]:$rot}" "${P[@]:0:$rot}")
  mkdir -p $d
  (cd $d && /tmp/yl -scenario $c -clients 4 -ops 5000 -seed $s -compare $(IFS=,; echo "${pol[*]}") -out . -plots=false > table.txt 2> log.txt)
done; done
