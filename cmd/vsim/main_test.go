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

// The same flags print the same bytes (the runs are in virtual time; how
// many run at once does not matter), and -out writes report.json and one
// log per run, laid out as cmd/hlogpool -batch reads them.
func TestQuickPresetRepeatsByteForByte(t *testing.T) {
	dir := t.TempDir()
	var a, b bytes.Buffer
	require.NoError(t, run([]string{"-preset", "quick", "-seeds", "1-2", "-parallel", "1", "-out", dir}, &a, &bytes.Buffer{}))
	require.NoError(t, run([]string{"-preset", "quick", "-seeds", "1-2", "-parallel", "2"}, &b, &bytes.Buffer{}))
	require.Equal(t, a.String(), b.String())
	assert.Contains(t, a.String(), "| tailroute | ")
	assert.Contains(t, a.String(), "| oracle | ")

	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(raw, &rep))
	require.Len(t, rep.Cells, 1)
	assert.Len(t, rep.Cells[0].Strategies, 6)
	assert.Equal(t, 40000, rep.Cells[0].Strategies[0].Requests)
	for _, s := range []string{"seed1", "seed2"} {
		_, err := os.Stat(filepath.Join(dir, "quick", s, "tailroute-run.hlog"))
		assert.NoError(t, err)
	}
}

func TestFlagErrors(t *testing.T) {
	for args, want := range map[string]string{
		"-preset nope":            `-preset "nope", allowed one of ablation, crossval, fig14, fig15, quick, scale`,
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
