package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "ycsb-lite: %v\n(run ycsb-lite -h for the flags)\n", err)
		return exitUsage
	}
	if o.showVersion {
		fmt.Fprintln(stdout, version())
		return exitOK
	}
	if o.listPolicies {
		for _, n := range policyNames() {
			fmt.Fprintln(stdout, n)
		}
		return exitOK
	}
	// stderr is shared by our log lines, the progress line and gocql's
	// logger (-v), which write from different goroutines, some of which
	// gocql leaves running for a moment after Session.Close. Everything goes
	// through one lock, and nothing is written once run returns (a caller
	// reading its buffer then would race with them; -race caught it).
	if err := o.checkOutputs(); err != nil {
		fmt.Fprintf(stderr, "ycsb-lite: %v\n(run ycsb-lite -h for the flags)\n", err)
		return exitUsage
	}
	ew := &lockedWriter{w: stderr}
	defer ew.close()
	stderr = ew
	// With -json - stdout carries the JSON document only; what is printed
	// for people (summaries, table, file names) goes to stderr.
	jsonOut := stdout
	if o.jsonPath == "-" {
		stdout = ew
	}
	r := &runner{o: o, stdout: stdout, stderr: ew}
	rep, err := r.compare(ctx)
	interrupted := ctx.Err() != nil
	code := exitOK
	if err != nil && !interrupted {
		fmt.Fprintf(stderr, "ycsb-lite: %v\n", err)
		code = exitFailure
	}
	if interrupted {
		fmt.Fprintln(stderr, "ycsb-lite: interrupted; reporting what was measured")
		code = exitInterrupted
	}
	if rep == nil || len(rep.Results) == 0 {
		if o.run && code == exitOK {
			fmt.Fprintln(stderr, "ycsb-lite: nothing was measured")
			code = exitFailure
		}
		return code
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "ycsb-lite: writing the table: %v\n", err)
		code = exitFailure
	}
	if o.baseline != nil {
		if err := rep.WriteBaseline(stdout, o.baseline, o.baselineName); err != nil {
			fmt.Fprintf(stderr, "ycsb-lite: writing the baseline comparison: %v\n", err)
			code = exitFailure
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "ycsb-lite: -out %s: %v\n", o.out, err)
		return exitFailure
	}
	if o.jsonPath == "-" {
		if err := rep.WriteJSON(jsonOut); err != nil {
			fmt.Fprintf(stderr, "ycsb-lite: writing the JSON report to stdout: %v\n", err)
			code = exitFailure
		}
	} else if f, err := os.Create(o.jsonPath); err != nil {
		fmt.Fprintf(stderr, "ycsb-lite: -json %s: %v\n", o.jsonPath, err)
		code = exitFailure
	} else {
		err = rep.WriteJSON(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(stderr, "ycsb-lite: writing %s: %v\n", o.jsonPath, err)
			code = exitFailure
		} else {
			fmt.Fprintf(stdout, "\nreport: %s\n", o.jsonPath)
		}
	}
	if o.hdr && o.run {
		fmt.Fprintf(stdout, "hdr: %s\n", filepath.Join(o.out, "<policy>-run.hgrm (percentile distribution), <policy>-run.hlog (interval log), <policy>-run-<OP>.hgrm (per operation type)"))
	}
	if o.plots {
		paths, err := rep.WritePlots(o.out)
		if err != nil {
			fmt.Fprintf(stderr, "ycsb-lite: plots: %v\n", err)
			code = exitFailure
		}
		for _, p := range paths {
			fmt.Fprintf(stdout, "plot: %s\n", p)
		}
	}
	return code
}

// lockedWriter serializes writes to w; after close it drops them.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return len(p), nil
	}
	return l.w.Write(p)
}

func (l *lockedWriter) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// checkOutputs makes sure, before any load, that the results can be
// written: -out is (or is created as) a writable directory and -json's
// directory exists once -out does.
func (o *options) checkOutputs() error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return badFlag("out", o.out, "a directory that exists or can be created ("+err.Error()+")")
	}
	probe, err := os.CreateTemp(o.out, ".ycsb-lite-probe-*")
	if err != nil {
		return badFlag("out", o.out, "a writable directory ("+err.Error()+")")
	}
	probe.Close()
	os.Remove(probe.Name())
	if o.jsonPath == "-" {
		return nil
	}
	if st, err := os.Stat(o.jsonPath); err == nil && st.IsDir() {
		return badFlag("json", o.jsonPath, "a file path, not a directory")
	}
	if st, err := os.Stat(filepath.Dir(o.jsonPath)); err != nil || !st.IsDir() {
		return badFlag("json", o.jsonPath, "a file in an existing directory, or - for stdout")
	}
	return nil
}
