"""Drives the DataStax Python driver (Debian python3-cassandra) against the
simulator for sim/pydriver_test.go: one JSON command per stdin line, one
JSON answer per stdout line.

  {"cmd":"connect","hosts":[...],"port":N,"keyspace":"ks"} -> hosts, control, protocol
                                                      (the driver negotiates the version)
  {"cmd":"scan","query":"SELECT ...","fetch_size":N}  -> rows (lists), pages
  {"cmd":"get","key":"k"}                               -> value of field0 (prepared)
  {"cmd":"wait","ip":"127.0.0.3","up":false,"timeout":5}-> ok, elapsed seconds
  {"cmd":"trace","query":"SELECT ..."}                  -> rows, trace (None or id), warnings
  {"cmd":"quit"}
"""
import json
import logging
import sys
import time

from cassandra.cluster import Cluster
from cassandra.policies import ConstantReconnectionPolicy, RoundRobinPolicy
from cassandra.query import SimpleStatement

logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                    format="%(asctime)s %(name)s %(levelname)s %(message)s")

cluster = None
session = None


def host(ip):
    for h in cluster.metadata.all_hosts():
        if h.address == ip:
            return h
    return None


def handle(req):
    global cluster, session
    cmd = req["cmd"]
    if cmd == "connect":
        cluster = Cluster(req["hosts"], port=req["port"],
                          load_balancing_policy=RoundRobinPolicy(),
                          reconnection_policy=ConstantReconnectionPolicy(0.5),
                          status_event_refresh_window=0.2, connect_timeout=10,
                          control_connection_timeout=10)
        session = cluster.connect(req.get("keyspace"))
        return {"hosts": sorted(h.address for h in cluster.metadata.all_hosts()),
                "control": cluster.control_connection._connection.endpoint.address,
                "protocol": cluster.protocol_version}
    if cmd == "scan":
        rs = session.execute(SimpleStatement(req["query"], fetch_size=req["fetch_size"]))
        rows, pages = [], 0
        while True:
            pages += 1
            rows.extend([list(r) for r in rs.current_rows])
            if not rs.has_more_pages:
                break
            rs.fetch_next_page()
        return {"rows": rows, "pages": pages}
    if cmd == "get":
        ps = session.prepare("SELECT field0 FROM usertable WHERE y_id = ?")
        row = session.execute(ps, [req["key"]]).one()
        return {"value": None if row is None else row[0]}
    if cmd == "wait":
        start = time.monotonic()
        while time.monotonic() - start < req["timeout"]:
            h = host(req["ip"])
            if h is not None and bool(h.is_up) == req["up"]:
                return {"ok": True, "elapsed": time.monotonic() - start}
            time.sleep(0.01)
        return {"ok": False, "elapsed": time.monotonic() - start}
    if cmd == "trace":
        fut = session.execute_async(req["query"], trace=True)
        rows = [list(r) for r in fut.result()]
        trace = fut.get_query_trace()
        return {"rows": rows, "trace": None if trace is None else str(trace.trace_id), "warnings": fut.warnings or []}
    raise ValueError("unknown command %r" % cmd)


for line in sys.stdin:
    req = json.loads(line)
    if req["cmd"] == "quit":
        break
    try:
        out = handle(req)
    except Exception as e:  # reported to the Go test, which fails on it
        out = {"error": "%s: %s" % (type(e).__name__, e)}
    print(json.dumps(out), flush=True)
if cluster is not None:
    cluster.shutdown()
