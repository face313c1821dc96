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

// TestProbe5Flags: output paths that cannot be written, named by the flag,
// before the work. Before the fixes, round-deadline and ilp-deadline built
// their corpus (5-7 s) before failing on -cpuprofile with a message naming
// no flag, solve's -in and -lp errors named no flag, sensitivity with -plot
// or -csv in a folder that cannot be made failed after the whole sweep, and
// a trace name given twice merged both traces' rows. Each case exits
// non-zero with one line naming the flag, within 20 s, without having
// started the work (nothing on stdout).
func TestProbe5Flags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example programs")
	}
	progs := []string{"round-deadline", "ilp-deadline", "solve", "sensitivity"}
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, p := range progs {
		args = append(args, "../"+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	work := t.TempDir()
	file := filepath.Join(work, "afile") // a file: no folder can be made under it
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	in := filepath.Join(work, "p.json")
	require.NoError(t, os.WriteFile(in, []byte(`{"sense":"max","unallocated":-1,"capacity":{"a":4},"jobs":[{"id":"j","options":[{"type":"a","gpus":2,"value":1}]}]}`), 0o644))
	wl := filepath.Join(work, "w.csv")
	require.NoError(t, os.WriteFile(wl, []byte("name,time,application,num_replicas,batch_size\nj1,0,cifar10,1,128\n"), 0o644))
	bad := filepath.Join(file, "x")
	for _, c := range []struct {
		prog string
		args []string
		want string
	}{
		{"round-deadline", []string{"-cpuprofile", bad, "-reps", "1", "-deadlines", "5ms"}, "-cpuprofile"},
		{"ilp-deadline", []string{"-cpuprofile", bad, "-reps", "1", "-deadlines", "5ms"}, "-cpuprofile"},
		{"solve", []string{"-in", in, "-lp", bad}, "-lp"},
		{"solve", []string{"-in", filepath.Join(file, "p.json")}, "-in"},
		{"solve", []string{"-in", work}, "-in"},
		{"sensitivity", []string{"-traces", "a=" + wl + ",a=" + wl, "-figures", "10"}, "-traces"},
		{"sensitivity", []string{"-traces", "a=" + wl, "-figures", "10", "-plot", bad}, "-plot"},
		{"sensitivity", []string{"-traces", "a=" + wl, "-figures", "10", "-csv", bad}, "-csv"},
	} {
		t.Run(c.prog+" "+strings.Join(c.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, c.prog), c.args...)
			cmd.Dir = work
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
			assert.Empty(t, stdout.String(), "started the work before failing")
		})
	}
}
