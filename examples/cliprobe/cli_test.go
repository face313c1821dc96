package cliprobe

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// programs are the example programs the table runs.
var programs = []string{"solve", "simulate", "gpt", "fit", "sensitivity", "ilp-deadline", "ilp-geninst", "ilp-hardrun", "ilp-compare", "round-deadline"}

// TestBadFlags: every case exits non-zero within a few seconds, with one
// line on stderr that contains want, and no panic. Before the fixes of this
// table, gpt -phase 0 or NaN looped for ever, ilp-deadline -only with no
// match and ilp-hardrun -seeds -1 panicked, ilp-deadline -deadlines 1000000h
// ran without bound, simulate -jobs-csv in a missing folder failed only
// after the whole simulation, ilp-compare -dir of a missing folder and the instance
// programs with 0 or negative counts exited 0 having done nothing.
func TestBadFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example programs")
	}
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, p := range programs {
		args = append(args, "../"+p)
	}
	build := exec.Command("go", args...)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	work := t.TempDir() // the programs write nothing here on bad flags
	for _, c := range []struct {
		prog string
		args []string
		want string
	}{
		{"gpt", []string{"-phase", "0"}, "-phase"},
		{"gpt", []string{"-phase", "NaN"}, "-phase"},
		{"gpt", []string{"-phase", "-1"}, "-phase"},
		{"gpt", []string{"-submit", "1e308"}, "-submit"},
		{"gpt", []string{"-variant", "x"}, "-variant"},
		{"gpt", []string{"-cluster", "t4:0x4"}, "-cluster"},
		{"gpt", []string{"extra"}, "unexpected argument"},
		{"ilp-deadline", []string{"-only", "no-such-instance"}, "-only"},
		{"ilp-deadline", []string{"-deadlines", "1000000h"}, "-deadlines"},
		{"ilp-deadline", []string{"-gap", "NaN"}, "-gap"},
		{"ilp-deadline", []string{"-gap", "-1"}, "-gap"},
		{"ilp-geninst", []string{"-out", work, "-jobs", "0"}, "jobs 0"},
		{"ilp-geninst", []string{"-out", work, "-jobs", "1000000000"}, "jobs 1000000000"},
		{"ilp-geninst", []string{"-out", work, "-scales", "0"}, "scale 0"},
		{"ilp-geninst", []string{"-out", work, "-pins", "NaN"}, "pinned fraction"},
		{"ilp-geninst", []string{"-out", work, "-powers", "0"}, "power 0"},
		{"ilp-geninst", []string{"-out", work, "-seeds", "-1"}, "-seeds"},
		{"ilp-hardrun", []string{"-seeds", "-1"}, "-seeds"},
		{"ilp-hardrun", []string{"-jobs", "-3"}, "jobs -3"},
		{"ilp-hardrun", []string{"-pins", "5"}, "pinned fraction"},
		{"ilp-hardrun", []string{"-timeout", "-1s"}, "-timeout"},
		{"ilp-compare", []string{"-dir", filepath.Join(work, "missing")}, "no such file"},
		{"ilp-compare", []string{"-dir", work}, "no NAME.json"},
		{"ilp-compare", []string{"-timeout", "0", "-dir", work}, "-timeout"},
		{"round-deadline", []string{"-only", "no-such-snapshot"}, "-only"},
		{"round-deadline", []string{"-deadlines", "0"}, "-deadlines"},
		{"simulate", []string{"-round", "1ns"}, "-round"},
		{"simulate", []string{"-hours", "NaN"}, "hours"},
		{"simulate", []string{"-scale", "0"}, "-scale"},
		{"simulate", []string{"-cluster", "t4:9223372036854775807x8"}, "cluster"},
		{"simulate", []string{"-parallel", "0"}, "-parallel"},
		{"simulate", []string{"-policy", "sia", "-jobs-csv", filepath.Join(work, "missing", "jobs.csv")}, "-jobs-csv"},
		{"simulate", []string{"-policy", "sia", "-jobs-json", work}, "-jobs-json"},
		{"solve", []string{"-in", filepath.Join(work, "missing.json")}, "no such file"},
		{"solve", []string{"-grid", "NaN", "-in", "x"}, "-grid"},
		{"solve", []string{"-timeout", "-1s", "-in", "x"}, "-timeout"},
		{"fit", []string{"-starts", "-1"}, "-starts"},
		{"sensitivity", []string{"-traces", "="}, "-traces"},
	} {
		t.Run(c.prog+" "+strings.Join(c.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, c.prog), c.args...)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "SIA_DATA="+filepath.Join(work, "no-data"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			require.NoError(t, ctx.Err(), "did not exit within 20 s")
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "exit status 0 (stdout %q)", stdout.String())
			msg := strings.TrimRight(stderr.String(), "\n")
			assert.NotContains(t, msg, "panic", msg)
			assert.Equal(t, 0, strings.Count(msg, "\n"), "more than one line: %q", msg)
			assert.Contains(t, msg, c.want)
		})
	}
}
