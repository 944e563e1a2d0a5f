// Package promlabels holds the options of the Prometheus collectors
// (policy/promstats and speculative/promstats): the labels every metric of
// a collector carries. Every metric has a session label, so that collectors
// of several policies (or hedgers) register side by side in one registry:
// the Prometheus registry requires the metrics of one name to have the same
// label names, and their values tell the collectors apart.
package promlabels

import "github.com/prometheus/client_golang/prometheus"

// DefaultSession is the session label's value when none is given.
const DefaultSession = "default"

// Option configures a collector's labels.
type Option func(*config)

type config struct {
	session string
	labels  prometheus.Labels
}

// WithSession sets the value of the session label every metric carries
// (default "default"). Give each collector of a registry its own.
func WithSession(name string) Option { return func(c *config) { c.session = name } }

// WithLabels adds constant labels to every metric (e.g. {"driver": "v2"});
// collectors registered together must use the same label names. A session
// key is the session label (WithSession, given too, wins).
func WithLabels(l prometheus.Labels) Option {
	return func(c *config) {
		for k, v := range l {
			c.labels[k] = v
		}
	}
}

// Const returns the constant labels opts give: WithLabels' and session.
func Const(opts []Option) prometheus.Labels {
	c := &config{labels: prometheus.Labels{}}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	switch {
	case c.session != "":
		c.labels["session"] = c.session
	case c.labels["session"] == "":
		c.labels["session"] = DefaultSession
	}
	return c.labels
}
