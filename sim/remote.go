package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// PeerConfig describes one member of a process-mode cluster.
type PeerConfig struct {
	IP     string  // advertised address (rpc_address), e.g. "127.0.0.2" or a container IP
	DC     string  // default "dc1"
	Rack   string  // default "rack1"
	Tokens []int64 // Murmur3 tokens; required
	Admin  string  // host:port of the peer's admin endpoint (for write/DDL forwarding); required for peers
}

// NodeConfig starts one node of a cluster whose other members run in other
// processes or containers.
type NodeConfig struct {
	Self        PeerConfig   // this node; Self.Admin is ignored (see AdminListen)
	Listen      string       // CQL bind address; default Self.IP (use "0.0.0.0" in containers)
	Port        int          // CQL port shared by every member; default 9042
	AdminListen string       // admin HTTP bind address; default Self.IP:0
	Peers       []PeerConfig // the other members
	ClusterName string       // default "tailroute-sim"
	Model       ServiceModel // zero fields take DefaultModel values
	Feedback    bool         // attach queue length & service time in the custom payload
	Seed        int64        // seeds host ids, service times and fluctuation phases

	MaxFrameSize    int           // as Config.MaxFrameSize
	WriteQueueBytes int           // as Config.WriteQueueBytes
	DownDelay       time.Duration // as Config.DownDelay (this process announces no peer's DOWN)
}

// nodeSeed mixes a node's address into the cluster's seed, so the members
// of one cluster, started with the same Seed in their own processes, draw
// their own service times and fluctuation phases.
func nodeSeed(ip string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(ip))
	return h.Sum64() * 0x9e3779b97f4a7c15
}

// StartNode starts one node of a multi-process cluster. The returned
// Cluster holds this node (Nodes()[0]) and knows the peers (Hosts()).
// Writes are forwarded to remote replicas and DDL to every peer over their
// admin endpoints.
func StartNode(ctx context.Context, cfg NodeConfig) (*Cluster, error) {
	if cfg.Port == 0 {
		cfg.Port = 9042
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("sim: NodeConfig.Port = %d, allowed 1..65535", cfg.Port)
	}
	if cfg.ClusterName == "" {
		cfg.ClusterName = "tailroute-sim"
	}
	cfg.Model = cfg.Model.withDefaults()
	if err := cfg.Model.Validate(); err != nil {
		return nil, err
	}
	limits := connLimits{MaxFrameSize: cfg.MaxFrameSize, WriteQueueBytes: cfg.WriteQueueBytes, DownDelay: cfg.DownDelay}.withDefaults()
	if err := limits.validate("NodeConfig"); err != nil {
		return nil, err
	}
	all := append([]PeerConfig{cfg.Self}, cfg.Peers...)
	c := newCluster(cfg.ClusterName, cfg.Feedback)
	c.limits = limits
	c.httpClient = &http.Client{Timeout: 10 * time.Second}
	seen := map[string]bool{}
	for i, p := range all {
		field := "Self"
		if i > 0 {
			field = fmt.Sprintf("Peers[%d]", i-1)
		}
		if net.ParseIP(p.IP) == nil {
			return nil, fmt.Errorf("sim: NodeConfig.%s.IP = %q, must be an IP address", field, p.IP)
		}
		if seen[p.IP] {
			return nil, fmt.Errorf("sim: NodeConfig.%s.IP = %q appears twice", field, p.IP)
		}
		seen[p.IP] = true
		if len(p.Tokens) == 0 {
			return nil, fmt.Errorf("sim: NodeConfig.%s.Tokens is empty, need at least one token", field)
		}
		if i > 0 && p.Admin == "" {
			return nil, fmt.Errorf("sim: NodeConfig.%s.Admin is empty, need the peer's admin host:port", field)
		}
		if p.DC == "" {
			p.DC = "dc1"
		}
		if p.Rack == "" {
			p.Rack = "rack1"
		}
		m := &member{idx: i, ip: p.IP, dc: p.DC, rack: p.Rack, tokens: append([]int64(nil), p.Tokens...),
			hostID: nameUUID("host:" + p.IP + ":" + cfg.ClusterName)}
		if i > 0 {
			m.admin = "http://" + p.Admin
		}
		c.members = append(c.members, m)
	}
	self := c.members[0]
	self.listen = cfg.Listen
	c.finishSetup()
	lns, port, err := listenAll(ctx, []string{self.listenAddr()}, cfg.Port)
	if err != nil {
		return nil, err
	}
	c.port = port
	n := newNode(c, self, cfg.Model, uint64(cfg.Seed)^nodeSeed(self.ip))
	c.nodes = []*Node{n}
	c.byIP[self.ip] = n
	n.serve(lns[0])
	admin := cfg.AdminListen
	if admin == "" {
		admin = net.JoinHostPort(self.ip, "0")
	}
	if err := n.startAdmin(admin); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (m *member) listenAddr() string {
	if m.listen != "" {
		return m.listen
	}
	return m.ip
}

// SplitTokens returns the evenly spaced single token of each of n nodes
// (node i gets MinInt64 + i*2^64/n), for configuring process-mode clusters.
func SplitTokens(n int) []int64 {
	out := make([]int64, n)
	for i, t := range evenTokens(n) {
		out[i] = t[0]
	}
	return out
}

type ddlForward struct {
	Query    string `json:"query"`
	Keyspace string `json:"keyspace"`
}

type wireRow struct {
	Token int64    `json:"token"`
	Vals  [][]byte `json:"vals"`
}

func (n *Node) internalRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /internal/mutate", func(w http.ResponseWriter, r *http.Request) {
		var m mutation
		if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&m); err != nil {
			writeErr(w, 400, err)
			return
		}
		td := n.c.schema.table(m.Keyspace, m.Table)
		if td == nil {
			writeErr(w, 404, fmt.Errorf("unconfigured table %s.%s", m.Keyspace, m.Table))
			return
		}
		n.store.apply(&m, len(td.cols))
		writeJSON(w, 200, map[string]bool{"ok": true})
	})
	mux.HandleFunc("POST /internal/ddl", func(w http.ResponseWriter, r *http.Request) {
		var d ddlForward
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&d); err != nil {
			writeErr(w, 400, err)
			return
		}
		st, err := parseStatement(d.Query)
		if err != nil {
			writeErr(w, 400, err)
			return
		}
		res := n.c.execDDL(st, d.Query, d.Keyspace, false)
		if isErrorMsg(res) {
			writeJSON(w, 200, map[string]string{"result": fmt.Sprint(res)})
			return
		}
		writeJSON(w, 200, map[string]bool{"ok": true})
	})
	mux.HandleFunc("GET /internal/get", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		key, err := base64.RawURLEncoding.DecodeString(q.Get("key"))
		if err != nil {
			writeErr(w, 400, err)
			return
		}
		writeJSON(w, 200, n.store.get(q.Get("ks"), q.Get("table"), key))
	})
	mux.HandleFunc("GET /internal/scan", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		from, err1 := strconv.ParseInt(q.Get("from"), 10, 64)
		limit, err2 := strconv.Atoi(q.Get("limit"))
		if err1 != nil || err2 != nil {
			writeErr(w, 400, fmt.Errorf("bad from/limit"))
			return
		}
		rows := n.store.scan(q.Get("ks"), q.Get("table"), from, q.Get("ex") == "1", limit)
		out := make([]wireRow, len(rows))
		for i, r := range rows {
			out[i] = wireRow{Token: r.token, Vals: r.vals}
		}
		writeJSON(w, 200, out)
	})
}

func (c *Cluster) postJSON(url string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	resp, err := c.httpClient.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return nil
}

func (c *Cluster) getJSON(url string, v any) error {
	resp, err := c.httpClient.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func (c *Cluster) remoteApply(mb *member, m *mutation) error {
	if c.httpClient == nil {
		return fmt.Errorf("no route to %s", mb.ip)
	}
	return c.postJSON(mb.admin+"/internal/mutate", m)
}

func (c *Cluster) remoteGet(mb *member, ks, table string, key []byte) ([][]byte, error) {
	if c.httpClient == nil {
		return nil, fmt.Errorf("no route to %s", mb.ip)
	}
	var vals [][]byte
	u := mb.admin + "/internal/get?ks=" + url.QueryEscape(ks) + "&table=" + url.QueryEscape(table) +
		"&key=" + base64.RawURLEncoding.EncodeToString(key)
	err := c.getJSON(u, &vals)
	return vals, err
}

func (c *Cluster) remoteScan(mb *member, ks, table string, from int64, ex bool, limit int) ([]*storedRow, error) {
	if c.httpClient == nil {
		return nil, fmt.Errorf("no route to %s", mb.ip)
	}
	exs := "0"
	if ex {
		exs = "1"
	}
	var rows []wireRow
	u := fmt.Sprintf("%s/internal/scan?ks=%s&table=%s&from=%d&ex=%s&limit=%d", mb.admin,
		url.QueryEscape(ks), url.QueryEscape(table), from, exs, limit)
	if err := c.getJSON(u, &rows); err != nil {
		return nil, err
	}
	out := make([]*storedRow, len(rows))
	for i, r := range rows {
		out[i] = &storedRow{token: r.Token, vals: r.Vals}
	}
	return out, nil
}

// forwardDDL sends a schema statement to every remote peer (best effort:
// an unreachable peer keeps its old schema until it is restarted).
func (c *Cluster) forwardDDL(q, ks string) {
	for _, mb := range c.members {
		if mb.node != nil || mb.admin == "" || c.httpClient == nil {
			continue
		}
		_ = c.postJSON(mb.admin+"/internal/ddl", ddlForward{Query: q, Keyspace: ks})
	}
}
