package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// cli is the command line being defined: flags are declared per topic (one
// function each, in flags_*.go) and listed by topic in -h; after parsing,
// each topic's check validates its flags into options, seeing what the
// checks run before it filled in (parse takes their order).
type cli struct {
	fs     *flag.FlagSet
	topics []*topic
	set    map[string]bool // flags given on the command line (after Parse)
	// terminal reports whether stderr is a terminal (progress line) or a
	// file or pipe (status lines).
	terminal bool
}

// topic is one group of flags in -h and its validation.
type topic struct {
	title, note string
	names       []string
	check       func(o *options) error
	more        func(w io.Writer) // printed after the flags (may be nil)
}

func newCLI(stderr io.Writer) *cli {
	fs := flag.NewFlagSet("ycsb-lite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &cli{fs: fs, set: map[string]bool{}}
	fs.Usage = func() { c.usage(fs.Output()) }
	return c
}

// topic declares a group of flags: define registers them on fs, in the
// order -h lists them, and returns the check that validates them into
// options after parsing.
func (c *cli) topic(title, note string, define func(fs *flagDefs) func(o *options) error) {
	t := &topic{title: title, note: note}
	t.check = define(&flagDefs{FlagSet: c.fs, names: &t.names})
	c.topics = append(c.topics, t)
}

// flagDefs is a FlagSet that remembers the order flags are defined in.
type flagDefs struct {
	*flag.FlagSet
	names *[]string
}

func (d *flagDefs) String(name, value, usage string) *string {
	*d.names = append(*d.names, name)
	return d.FlagSet.String(name, value, usage)
}

func (d *flagDefs) Int(name string, value int, usage string) *int {
	*d.names = append(*d.names, name)
	return d.FlagSet.Int(name, value, usage)
}

func (d *flagDefs) Int64(name string, value int64, usage string) *int64 {
	*d.names = append(*d.names, name)
	return d.FlagSet.Int64(name, value, usage)
}

func (d *flagDefs) Float64(name string, value float64, usage string) *float64 {
	*d.names = append(*d.names, name)
	return d.FlagSet.Float64(name, value, usage)
}

func (d *flagDefs) Bool(name string, value bool, usage string) *bool {
	*d.names = append(*d.names, name)
	return d.FlagSet.Bool(name, value, usage)
}

func (d *flagDefs) Duration(name string, value time.Duration, usage string) *time.Duration {
	*d.names = append(*d.names, name)
	return d.FlagSet.Duration(name, value, usage)
}

func (d *flagDefs) Var(value flag.Value, name, usage string) {
	*d.names = append(*d.names, name)
	d.FlagSet.Var(value, name, usage)
}

// parse parses args and runs the topics' checks: those named in order
// first, in that order, then the rest as declared.
func (c *cli) parse(args []string, o *options, order ...string) error {
	if err := c.fs.Parse(args); err != nil {
		return err
	}
	c.fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	if c.fs.NArg() > 0 {
		return &flagError{fmt.Sprintf("unexpected argument %q; all settings are flags (see -h)", c.fs.Arg(0))}
	}
	var checks []*topic
	done := map[*topic]bool{}
	for _, title := range order {
		for _, t := range c.topics {
			if t.title == title && !done[t] {
				checks, done[t] = append(checks, t), true
			}
		}
	}
	for _, t := range c.topics {
		if !done[t] {
			checks = append(checks, t)
		}
	}
	for _, t := range checks {
		if t.check == nil {
			continue
		}
		if err := t.check(o); err != nil {
			return err
		}
		if o.listPolicies {
			return nil
		}
	}
	return nil
}

const usageHead = `Usage: ycsb-lite [flags]

YCSB-like load generator: runs the same workload, scenario and seed once per
host-selection policy through the real gocql driver and compares their latency.
With no flags it starts an embedded 5-node simulated cluster (RF 3), applies the
slow-node scenario and compares %s.

Examples:
  ycsb-lite                                            the comparison above
  ycsb-lite -compare tailroute,token-aware,oracle -scenario bimodal
  ycsb-lite -compare tailroute,tailroute+hedge -scenario gc-pauses
  ycsb-lite -P workloads/workloada -p recordcount=100000 -target 2000
  ycsb-lite -warmup 10s -baseline old-out/report.json     (warm-up unmeasured; change against an earlier run)
  ycsb-lite -hosts 10.0.0.1 -replication dc1:3,dc2:3 -drop-keyspace -compare tailroute,token-aware
  ycsb-lite -json - -plots=false | jq .                   (stdout is the JSON report only)
  ycsb-lite -hosts 10.0.0.1,10.0.0.2 -local-dc dc1 -username u -password p \
            -tls-ca ca.pem -compare tailroute,token-aware -scenario steady
  ycsb-lite -compare tailroute,token-aware 2>&1 | tee run.log   (status lines every -status-interval)
`

// usage prints -h: examples, then the flags by topic.
func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, usageHead, strings.Join(defaultCompare, ", "))
	for _, t := range c.topics {
		fmt.Fprintf(w, "\n%s:\n", t.title)
		if t.note != "" {
			fmt.Fprintf(w, "  %s\n", t.note)
		}
		for _, name := range t.names {
			printFlag(w, c.fs.Lookup(name))
		}
		if t.more != nil {
			t.more(w)
		}
	}
}

// describe sets the text printed after the last declared topic's flags.
func (c *cli) describe(more func(w io.Writer)) { c.topics[len(c.topics)-1].more = more }

// printFlag prints one flag as flag.PrintDefaults does, with the default
// as its Value prints it (durations as 5s, fractions as 1/3, "auto").
func printFlag(w io.Writer, f *flag.Flag) {
	typ, usage := flag.UnquoteUsage(f)
	line := "  -" + f.Name
	if typ != "" {
		line += " " + typ
	}
	fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
	switch f.DefValue {
	case "", "0", "false", "0s":
	default:
		if typ == "string" {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		} else {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
	}
	fmt.Fprintln(w)
}

// autoDuration is a duration flag whose default is computed ("auto",
// negative inside); "auto", -1 and -1ns select it.
type autoDuration struct{ d time.Duration }

func (a *autoDuration) String() string {
	if a == nil || a.d < 0 {
		return "auto"
	}
	return a.d.String()
}

func (a *autoDuration) Set(s string) error {
	switch strings.TrimSpace(s) {
	case "auto", "-1", "-1ns":
		a.d = -1
		return nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return errors.New("want a duration such as 30s, or auto")
	}
	a.d = d // the topic's check rejects other negative values, naming the flag
	return nil
}

// fraction is a number flag given as a decimal (0.25) or a ratio (1/3);
// it prints as it was given.
type fraction struct {
	v    float64
	text string
}

func newFraction(text string) *fraction {
	f := &fraction{}
	_ = f.Set(text) // defaults are literals in this package
	return f
}

func (f *fraction) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

func (f *fraction) Set(s string) error {
	s = strings.TrimSpace(s)
	const want = "want a number such as 0.25 or a ratio such as 1/3"
	if num, den, ok := strings.Cut(s, "/"); ok {
		n, err1 := strconv.ParseFloat(strings.TrimSpace(num), 64)
		d, err2 := strconv.ParseFloat(strings.TrimSpace(den), 64)
		if err1 != nil || err2 != nil || d == 0 {
			return errors.New(want)
		}
		f.v, f.text = n/d, s
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New(want)
	}
	f.v, f.text = x, s // the topic's check enforces [0, 1], naming the flag
	return nil
}

// listFlag collects a repeatable flag's values in order.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("want a non-empty value")
	}
	*l = append(*l, strings.TrimSpace(s))
	return nil
}
