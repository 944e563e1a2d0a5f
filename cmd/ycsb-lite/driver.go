package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/tailroute/tailroute/sim"
)

// Drivers -driver accepts.
const (
	driverV1 = "v1"
	driverV2 = "v2"
)

// A driver binds ycsb-lite to one Cassandra Go driver: gocql v1
// (driver_v1.go) or github.com/apache/cassandra-gocql-driver/v2
// (driver_v2.go). Everything else (policies, their options, hedging, the
// run) is written once; a policySpec carries each driver's install.
type driver interface {
	// connect opens client c: a session of the driver configured from the
	// flags, with spec's policy installed for env (c.inst), c's host
	// counter and attempt windows fed by its query observer after the
	// policy's own, and c.db running statements through it. release frees
	// what the policy started and closeSession closes the session; either
	// may be nil, and both are set as far as connect got when it fails.
	connect(r *runner, spec policySpec, env policyEnv, c *client, hosts []string, port int) (release, closeSession func(), err error)
}

var drivers = map[string]driver{driverV1: v1Driver, driverV2: v2Driver}

// binding is a driver by its session configuration type C: what differs
// between the drivers, in the order connect uses it.
type binding[C any] struct {
	note    string                                                 // after the policy's name in a connection error
	config  func(r *runner, hosts []string, port int) C            // a client session's configuration from the flags
	install func(policySpec) func(policyEnv, C) (installed, error) // the spec's install for this driver
	// dial sets the dialer of a client placed in a zone (zones.go).
	dial func(cfg C, d *net.Dialer)
	// open sets the keyspace, chains c's observer after the policy's, opens
	// the session and binds c.db to it.
	open func(cfg C, c *client) (closeSession func(), err error)
}

func (b binding[C]) connect(r *runner, spec policySpec, env policyEnv, c *client, hosts []string, port int) (func(), func(), error) {
	cfg := b.config(r, hosts, port)
	d, err := zoneDialer(env, r.o.connectTimeout)
	if err != nil {
		return nil, nil, err
	}
	if d != nil {
		b.dial(cfg, d)
	}
	inst, err := b.install(spec)(env, cfg)
	c.inst = inst
	if err != nil {
		return nil, nil, err
	}
	closeSession, err := b.open(cfg, c)
	if err != nil {
		return inst.release, nil, fmt.Errorf("connecting to %v with policy %s%s: %w", hosts, spec.name, b.note, err)
	}
	return inst.release, closeSession, nil
}

// openClients opens one session, policy instance and host counter per client
// (C3 §6: independent clients sharing the cluster). closeAll closes the
// sessions and releases the policies, last client first.
func (r *runner) openClients(spec policySpec, cl *sim.Cluster, hosts []string, port int, fields []string) (clients []*client, closeAll func(), err error) {
	o := r.o
	drv, ok := drivers[o.driver]
	if !ok {
		drv = v1Driver // options not from parseFlags (tests): the default
	}
	var cleanup []func()
	closeAll = func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	clients = make([]*client, o.clients)
	for c := range clients {
		env := policyEnv{cluster: cl, seed: o.seed + int64(c), rf: o.rf, clients: o.clients, client: c, localDC: o.localDC, tailTerm: o.tailTerm}
		cli := &client{counter: newHostCounter(), attempts: &attemptWindows{},
			db: newCQLDB(nil, o.keyspace, o.cfg.Table, fields, o.consistency)}
		release, closeSession, err := drv.connect(r, spec, env, cli, hosts, port)
		for _, f := range []func(){release, closeSession} {
			if f != nil {
				cleanup = append(cleanup, f)
			}
		}
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		clients[c] = cli
	}
	return clients, closeAll, nil
}

// policyNamesV2 lists the policies of -driver v2 (without +hedge): every
// policy has an install for each driver.
func policyNamesV2() []string {
	var names []string
	for _, n := range policyNames() {
		if policies[n].v2 != nil {
			names = append(names, n)
		}
	}
	return names
}

// lookupV2 resolves a -driver v2 policy name, <policy>+hedge and its
// variants included.
func lookupV2(name string) (policySpec, error) {
	spec, err := lookupPolicy(name)
	if err != nil {
		if _, hedged, _ := lookupHedged(name); hedged {
			return spec, err // the +hedge variant's own error
		}
	}
	if err != nil || spec.v2 == nil {
		return policySpec{}, fmt.Errorf("-driver v2 runs the policies %s (each also as <policy>%s); not %q",
			strings.Join(policyNamesV2(), ", "), hedgeSuffix, strings.TrimSpace(name))
	}
	return spec, nil
}

// checkDriver validates -driver against the chosen policies.
func checkDriver(driver string, policies []string) error {
	switch driver {
	case driverV1:
		return nil
	case driverV2:
		for _, p := range policies {
			if _, err := lookupV2(p); err != nil {
				return &flagError{err.Error()}
			}
		}
		return nil
	}
	return badFlag("driver", driver, "v1 (github.com/gocql/gocql) or v2 (github.com/apache/cassandra-gocql-driver/v2)")
}
