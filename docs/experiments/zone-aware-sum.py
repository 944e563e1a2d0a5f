#!/usr/bin/env python3
"""Zone cells (issue 43): per cell and policy, from <out>/<cell>/seed<k>/report.json:
runs; requests out of the client's zone pooled over the seeds (and the per-seed range);
cross-zone bytes; the median over seeds of p50, of p99 and of the share over -slow (50 ms);
and the median over seeds of the per-seed p99 ratio to the first policy. A run spoiled by a
stall of the whole process (a shared machine) moves one seed's figures, not the medians.
Usage: zone-aware-sum.py /tmp/zones/c4 tailroute-rack,tailroute,rack-aware"""
import glob, json, statistics as st, sys

out, pols = sys.argv[1], sys.argv[2].split(',')
print('| cell | policy | runs | out of zone, pooled (per seed) | cross-zone bytes | p50 ms | p99 ms | p99 / ' + pols[0] + ' | over 50 ms |')
print('|---|---|---:|---|---:|---:|---:|---:|---:|')
for cell in ['zones', 'zone-slow', 'zone-pause', 'zones-spread']:
    runs = {p: {} for p in pols}
    for f in sorted(glob.glob(f'{out}/{cell}/seed*/report.json')):
        for res in json.load(open(f))['results']:
            if res['policy'] in runs and not res.get('interrupted') and not res.get('truncated'):
                runs[res['policy']][f] = res
    base = runs[pols[0]]
    for p in pols:
        rs = runs[p]
        if not rs:
            continue
        z = [r['zones'] for r in rs.values()]
        req, oz = sum(x['requests'] for x in z), sum(x['out_of_zone'] for x in z)
        by, cb = sum(x['bytes'] for x in z), sum(x['cross_zone_bytes'] for x in z)
        sh = [x['out_of_zone_pct'] for x in z]
        p50 = st.median(r['latency']['p50_us'] for r in rs.values()) / 1000
        p99 = st.median(r['latency']['p99_us'] for r in rs.values()) / 1000
        slow = st.median(r['slow_ops'] / max(1, r['operations']) for r in rs.values()) * 100
        ratio = st.median(rs[f]['latency']['p99_us'] / base[f]['latency']['p99_us'] for f in rs if f in base)
        print(f'| {cell} | {p} | {len(rs)} | {100*oz/req:.1f} % ({min(sh):.1f}-{max(sh):.1f}) | {100*cb/by:.1f} % '
              f'| {p50:.2f} | {p99:.1f} | {ratio:.2f} | {slow:.2f} % |')
