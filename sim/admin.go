package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// ModelJSON is the JSON form of a ServiceModel used by the admin endpoint:
// durations are Go duration strings ("4ms"). In a POST /model every field is
// optional and only the given fields change; a given field is taken as is
// (0 is a value, not "default": {"Workers":0} is an error).
type ModelJSON struct {
	Workers             *int     `json:"Workers,omitempty"`
	MeanService         *string  `json:"MeanService,omitempty"`
	ZeroService         *bool    `json:"ZeroService,omitempty"`
	Slowdown            *float64 `json:"Slowdown,omitempty"`
	FluctuationInterval *string  `json:"FluctuationInterval,omitempty"`
	FluctuationD        *float64 `json:"FluctuationD,omitempty"`
	PauseEvery          *string  `json:"PauseEvery,omitempty"`
	PauseFor            *string  `json:"PauseFor,omitempty"`
	ErrorRate           *float64 `json:"ErrorRate,omitempty"`
	InjectedError       *string  `json:"InjectedError,omitempty"`
}

// ToJSON converts a model to its JSON form (all fields set).
func (m ServiceModel) ToJSON() ModelJSON {
	s := func(d time.Duration) *string { v := d.String(); return &v }
	return ModelJSON{Workers: &m.Workers, MeanService: s(m.MeanService), ZeroService: &m.ZeroService,
		Slowdown: &m.Slowdown, FluctuationInterval: s(m.FluctuationInterval), FluctuationD: &m.FluctuationD,
		PauseEvery: s(m.PauseEvery), PauseFor: s(m.PauseFor), ErrorRate: &m.ErrorRate, InjectedError: &m.InjectedError}
}

// Apply returns base with the fields present in j replaced, validated
// (ServiceModel.Validate) without filling zero fields with defaults.
func (j ModelJSON) Apply(base ServiceModel) (ServiceModel, error) {
	dur := func(field string, p *string, dst *time.Duration) error {
		if p == nil {
			return nil
		}
		d, err := time.ParseDuration(*p)
		if err != nil {
			return fmt.Errorf("sim: ServiceModel.%s = %q: not a duration such as \"4ms\"", field, *p)
		}
		*dst = d
		return nil
	}
	m := base
	if j.Workers != nil {
		m.Workers = *j.Workers
	}
	if j.ZeroService != nil {
		m.ZeroService = *j.ZeroService
	}
	if j.Slowdown != nil {
		m.Slowdown = *j.Slowdown
	}
	if j.FluctuationD != nil {
		m.FluctuationD = *j.FluctuationD
	}
	if j.ErrorRate != nil {
		m.ErrorRate = *j.ErrorRate
	}
	if j.InjectedError != nil {
		m.InjectedError = *j.InjectedError
	}
	for _, e := range []error{dur("MeanService", j.MeanService, &m.MeanService),
		dur("FluctuationInterval", j.FluctuationInterval, &m.FluctuationInterval),
		dur("PauseEvery", j.PauseEvery, &m.PauseEvery), dur("PauseFor", j.PauseFor, &m.PauseFor)} {
		if e != nil {
			return base, e
		}
	}
	if err := m.Validate(); err != nil {
		return base, err
	}
	return m, nil
}

// AdminStats is the JSON answer of GET /stats.
type AdminStats struct {
	IP                string    `json:"ip"`
	DC                string    `json:"dc"`
	Rack              string    `json:"rack"`
	Running           bool      `json:"running"`
	Served            uint64    `json:"served"`
	Errors            uint64    `json:"errors"`
	QueueLen          int       `json:"queueLen"`
	InFlight          int       `json:"inFlight"`
	Dropped           uint64    `json:"dropped"` // client connections dropped for not reading their responses
	Windows           []uint64  `json:"windows"`
	WindowMillis      int       `json:"windowMillis"`
	OracleQueueLen    int       `json:"oracleQueueLen"`
	OracleServiceTime string    `json:"oracleServiceTime"`
	Model             ModelJSON `json:"model"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

// adminHandler serves the node's admin API:
//
//	GET  /stats           counters, windows, oracle and model
//	GET  /model           the ServiceModel (durations as strings)
//	POST /model           partial ModelJSON; validated, then installed
//	POST /pause?for=300ms one stop-the-world pause starting now
//	POST /stop, /restart  node down / up
//	/internal/...         peer-to-peer forwarding in process mode
func (n *Node) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		st := n.Stats()
		q, s := n.Oracle()
		writeJSON(w, 200, AdminStats{IP: n.IP(), DC: n.DC(), Rack: n.Rack(), Running: n.Running(),
			Served: st.Served, Errors: st.Errors, QueueLen: st.QueueLen, InFlight: st.InFlight, Dropped: st.Dropped,
			Windows: st.Windows, WindowMillis: int(windowWidth / time.Millisecond),
			OracleQueueLen: q, OracleServiceTime: s.String(), Model: n.Model().ToJSON()})
	})
	mux.HandleFunc("GET /model", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, n.Model().ToJSON())
	})
	mux.HandleFunc("POST /model", func(w http.ResponseWriter, r *http.Request) {
		var j ModelJSON
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			writeErr(w, 400, fmt.Errorf("sim: bad model JSON: %w", err))
			return
		}
		if _, err := dec.Token(); err != io.EOF {
			writeErr(w, 400, errors.New("sim: bad model JSON: want exactly one JSON object, found more data after it"))
			return
		}
		m, err := j.Apply(n.Model())
		if err == nil {
			err = n.SetModel(m)
		}
		if err != nil {
			writeErr(w, 400, err)
			return
		}
		writeJSON(w, 200, n.Model().ToJSON())
	})
	mux.HandleFunc("POST /pause", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("for")
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > time.Hour {
			writeErr(w, 400, fmt.Errorf("sim: pause for = %q, want a duration in (0, 1h] such as \"300ms\"", v))
			return
		}
		n.Pause(d)
		writeJSON(w, 200, map[string]string{"paused": d.String()})
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, r *http.Request) {
		if err := n.Stop(); err != nil {
			writeErr(w, 409, err)
			return
		}
		writeJSON(w, 200, map[string]bool{"running": false})
	})
	mux.HandleFunc("POST /restart", func(w http.ResponseWriter, r *http.Request) {
		if err := n.Restart(); err != nil {
			writeErr(w, 409, err)
			return
		}
		writeJSON(w, 200, map[string]bool{"running": true})
	})
	n.internalRoutes(mux)
	return mux
}

// startAdmin starts the admin endpoint on addr.
func (n *Node) startAdmin(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sim: admin endpoint of %s on %s: %w", n.m.ip, addr, err)
	}
	srv := &http.Server{Handler: n.adminHandler(), ReadHeaderTimeout: 5 * time.Second}
	n.mu.Lock()
	n.admin = srv
	n.adminLn = ln
	n.mu.Unlock()
	n.c.wg.Add(1)
	go func() {
		defer n.c.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err
		}
	}()
	return nil
}
