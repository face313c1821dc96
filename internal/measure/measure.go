// Package measure holds the measurement helpers of the deadline tests and
// programs (ilp and sia's deadline tests, examples/ilp-deadline,
// examples/round-deadline): a thread's CPU time, which unlike wall time
// does not grow with the machine's load, the peak heap during a call,
// nearest-rank quantiles, and the programs' -deadlines and -cpuprofile
// flags.
package measure

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"
)

// Quantile is the nearest-rank quantile f of the sorted slice s, rounded
// to 10 µs (0 for an empty slice).
func Quantile(s []time.Duration, f float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(f*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)].Round(10 * time.Microsecond)
}

const heapMetric = "/memory/classes/heap/objects:bytes"

// HeapBytes is the heap held by objects now (live and not yet swept).
func HeapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// SampleHeap records in peak the largest heap (HeapBytes) seen every
// 250 µs until stop is closed; run it in its own goroutine.
func SampleHeap(stop <-chan struct{}, peak *atomic.Uint64) {
	s := []metrics.Sample{{Name: heapMetric}}
	t := time.NewTicker(250 * time.Microsecond)
	defer t.Stop()
	for {
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// ParseDeadlines reads a comma-separated list of durations (the deadline
// programs' -deadlines flag), each positive and, when max > 0, at most max.
func ParseDeadlines(list string, max time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(list, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 || max > 0 && d > max {
			want := "positive durations"
			if max > 0 {
				want = fmt.Sprintf("durations in (0, %v]", max)
			}
			return nil, fmt.Errorf("bad -deadlines (want %s): %q", want, f)
		}
		out = append(out, d)
	}
	return out, nil
}

// CheckCPUProfile creates the file a later StartCPUProfile writes (nothing
// when path is empty), so that a program fails on a bad -cpuprofile before
// its work rather than after it; the error names the flag.
func CheckCPUProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	return f.Close()
}

// StartCPUProfile writes a CPU profile to path until the returned stop is
// called; an empty path profiles nothing (stop does nothing). Its errors
// name the flag -cpuprofile.
func StartCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// CPUProbe reads a thread's CPU time at a given wall-clock instant (see
// CPUAt).
type CPUProbe struct {
	stop chan struct{}
	done chan struct{}
	at   Reading
	late time.Duration
	read bool
}

// CPUAt starts a probe that reads thread tid's CPU time (ReadOf) when
// the wall clock reaches at. A timer alone fires up to about a millisecond
// late while the process is busy, which would hide that much CPU time
// after a deadline; the probe sleeps until shortly before at and spins the
// rest on its own thread.
func CPUAt(tid int, at time.Time) *CPUProbe {
	p := &CPUProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go p.run(tid, at)
	return p
}

// spinBefore is how long before its instant a probe stops sleeping and
// spins.
const spinBefore = time.Millisecond

func (p *CPUProbe) run(tid int, at time.Time) {
	defer close(p.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if d := time.Until(at) - spinBefore; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-p.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
	for time.Now().Before(at) {
		select {
		case <-p.stop:
			return
		default:
		}
	}
	p.at = ReadOf(tid)
	p.late, p.read = p.at.Wall.Sub(at), true
}

// Stop ends the probe and returns its reading of the thread at the
// instant, how late after it the reading was taken, and whether the
// instant was reached before Stop.
func (p *CPUProbe) Stop() (at Reading, late time.Duration, reached bool) {
	close(p.stop)
	<-p.done
	return p.at, p.late, p.read
}

// A Reading is a thread's CPU time and the wall time it was read at.
type Reading struct {
	CPU  time.Duration
	Wall time.Time
}

// Read is the calling thread's Reading (lock the goroutine to its thread
// with runtime.LockOSThread first).
func Read() Reading { return Reading{ThreadCPU(), time.Now()} }

// ReadOf is thread tid's Reading, taken from any thread.
func ReadOf(tid int) Reading { return Reading{ThreadCPUOf(tid), time.Now()} }

// Since is the CPU time the thread used from r0 to r, never more than the
// wall time between them: a thread cannot use more CPU than the time that
// passed, yet a virtual machine's thread CPU clock can lag and then catch
// up at once (seen on this project's CI machines: 7 ms of CPU time in
// 250 ns of wall time, and once about a second), which a deadline test
// would take for the solve's own CPU time past its deadline.
func (r Reading) Since(r0 Reading) time.Duration {
	return max(0, min(r.CPU-r0.CPU, r.Wall.Sub(r0.Wall)))
}
