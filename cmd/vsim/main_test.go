package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repeats runs args once with -parallel 1 and -out dir, once with
// -parallel 2, requires the same output, and returns it with the one-cell
// report.json the first wrote.
func repeats(t *testing.T, dir string, args ...string) (string, report) {
	t.Helper()
	var a, b bytes.Buffer
	require.NoError(t, run(append(args[:len(args):len(args)], "-parallel", "1", "-out", dir), &a, &bytes.Buffer{}))
	require.NoError(t, run(append(args, "-parallel", "2"), &b, &bytes.Buffer{}))
	require.Equal(t, a.String(), b.String())
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(raw, &rep))
	require.Len(t, rep.Cells, 1)
	return a.String(), rep
}

// The same flags print the same bytes (the runs are in virtual time; how
// many run at once does not matter), and -out writes report.json and one
// log per run, laid out as cmd/hlogpool -batch reads them.
func TestQuickPresetRepeatsByteForByte(t *testing.T) {
	dir := t.TempDir()
	out, rep := repeats(t, dir, "-preset", "quick", "-seeds", "1-2")
	assert.Contains(t, out, "| tailroute | ")
	assert.Contains(t, out, "| oracle | ")
	assert.Len(t, rep.Cells[0].Strategies, 6)
	assert.Equal(t, 40000, rep.Cells[0].Strategies[0].Requests)
	for _, s := range []string{"seed1", "seed2"} {
		_, err := os.Stat(filepath.Join(dir, "quick", s, "tailroute-run.hlog"))
		assert.NoError(t, err)
	}
}

// The zone preset's smallest cell repeats byte for byte too, and reports
// the share of requests out of the client's zone in its table and JSON:
// none for rack-aware (its replica in the clients' rack always goes
// first), some for tailroute.
func TestZonesPresetRepeatsByteForByte(t *testing.T) {
	out, rep := repeats(t, t.TempDir(), "-preset", "zones", "-cells", "zones-spread", "-seeds", "1-2", "-requests", "2000")
	assert.Contains(t, out, "| > 50 ms | out of zone |")
	assert.Contains(t, out, "| tailroute-rack | ")
	share := map[string]float64{}
	for _, s := range rep.Cells[0].Strategies {
		require.NotNil(t, s.OutOfZone, s.Strategy)
		share[s.Strategy] = *s.OutOfZone
	}
	assert.Zero(t, share["rack-aware"])
	assert.Greater(t, share["tailroute"], 0.3)
	assert.Less(t, share["tailroute-rack"], share["tailroute"])
}

func TestFlagErrors(t *testing.T) {
	for args, want := range map[string]string{
		"-preset nope":            `-preset "nope", allowed one of ablation, crossval, fig14, fig15, quick, scale, zones`,
		"-strategies tailroute,x": `-strategies: "x", allowed`,
		"-seeds 5-1":              `"5-1" is not a range`,
		"-seeds a":                `"a" is not a seed`,
		"-parallel 0":             "-parallel = 0, allowed >= 1",
		"-preset fig14 -cells zz": `-cells "zz" matches no cell of preset fig14`,
	} {
		err := run(strings.Fields(args), &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want, args)
	}
}
