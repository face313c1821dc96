package measure

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuantile(t *testing.T) {
	s := []time.Duration{1 * time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}
	assert.Equal(t, 2*time.Millisecond, Quantile(s, 0.5))
	assert.Equal(t, 4*time.Millisecond, Quantile(s, 0.99))
	assert.Equal(t, 1*time.Millisecond, Quantile(s, 0))
	assert.Zero(t, Quantile(nil, 0.5))
}

// TestThreadCPU: a busy loop on a locked thread advances its CPU time, read
// both from the thread itself and through its id; the heap sampler sees a
// large allocation.
func TestThreadCPU(t *testing.T) {
	if !ThreadCPUAvailable {
		t.Skip("no thread CPU clock on this system")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self0, of0 := ThreadCPU(), ThreadCPUOf(ThreadID())
	x := 0
	for i := range 20_000_000 {
		x += i % 7
	}
	assert.Positive(t, x)
	assert.Greater(t, ThreadCPU(), self0)
	assert.Greater(t, ThreadCPUOf(ThreadID()), of0)

	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { SampleHeap(stop, &peak); close(done) }()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	assert.Eventually(t, func() bool { return peak.Load() >= uint64(len(buf)) }, 10*time.Second, time.Millisecond)
	close(stop)
	<-done
	runtime.KeepAlive(buf)
}

func TestParseDeadlines(t *testing.T) {
	got, err := ParseDeadlines("5ms, 20ms,1s", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{5 * time.Millisecond, 20 * time.Millisecond, time.Second}, got)
	for _, bad := range []string{"", "0s", "-1ms", "x", "5ms,,1s", "2m"} {
		_, err := ParseDeadlines(bad, time.Minute)
		assert.Error(t, err, bad)
	}
	got, err = ParseDeadlines("2m", 0)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{2 * time.Minute}, got)
}

func TestStartCPUProfile(t *testing.T) {
	stop, err := StartCPUProfile("")
	require.NoError(t, err)
	stop()
	path := t.TempDir() + "/cpu.pprof"
	stop, err = StartCPUProfile(path)
	require.NoError(t, err)
	stop()
	assert.FileExists(t, path)
	_, err = StartCPUProfile(t.TempDir() + "/no/such/dir/cpu.pprof")
	assert.Error(t, err)
}

// TestReadingSince: the CPU time between two readings is bounded by the
// wall time between them (a clock that caught up by a second in a
// millisecond counts the millisecond), and never negative.
func TestReadingSince(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r0 := Reading{CPU: 5 * time.Second, Wall: t0}
	for _, c := range []struct {
		name      string
		cpu, wall time.Duration
		want      time.Duration
	}{
		{"cpu below wall", time.Millisecond, 3 * time.Millisecond, time.Millisecond},
		{"equal", 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond},
		{"cpu caught up", time.Second, time.Millisecond, time.Millisecond},
		{"no wall time", 7 * time.Millisecond, 250, 250},
		{"cpu behind", -time.Millisecond, time.Millisecond, 0},
		{"wall behind", time.Millisecond, -time.Millisecond, 0},
	} {
		r := Reading{CPU: r0.CPU + c.cpu, Wall: t0.Add(c.wall)}
		assert.Equal(t, c.want, r.Since(r0), c.name)
	}
	if !ThreadCPUAvailable {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := Read()
	x := 0
	for i := range 5_000_000 {
		x += i % 7
	}
	b, of := Read(), ReadOf(ThreadID())
	assert.Positive(t, x)
	assert.Positive(t, b.Since(a))
	assert.LessOrEqual(t, b.Since(a), b.Wall.Sub(a.Wall))
	assert.Positive(t, of.Since(a))
}
