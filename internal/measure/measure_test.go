package measure

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
