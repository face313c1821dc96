package ilp_test

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/measure"
)

var corpusAllocs = flag.String("corpus.allocs", "", "TestCorpusLateAllocs: the deadlines (e.g. 20ms,100ms) at which to trace the hard corpus's allocations in the last milliseconds")

// TestCorpusLateAllocs solves every instance of the hard corpus under each
// deadline of -corpus.allocs on the solving thread's CPU clock and prints,
// per instance, the heap bytes each step allocated from 3 ms before the
// deadline on, and the garbage collections that started then: what could
// start a collection in the last milliseconds (its assists and pauses are
// wall-clock time past the deadline). The bytes are those the runtime has
// accounted for when each step ends (it accounts for small allocations
// by span, so a step may be charged some of its predecessor's). It checks
// that the solve allocates at most 3 MB and 512 bytes per job from 3 ms
// before the deadline on (the corpus: 0-2.6 MB at 20 ms, in the root's
// knapsack tables of up to 2 MB when the model is complete, else nearly
// all in the model's last arena chunks; 0-1.2 MB at 100 ms; 24-120 KB of
// it after the search at both). Without the flag it is skipped.
//
//	go test ./ilp -run TestCorpusLateAllocs -corpus.allocs 20ms,100ms -v
func TestCorpusLateAllocs(t *testing.T) {
	if *corpusAllocs == "" {
		t.Skip("no -corpus.allocs")
	}
	if !ilp.ThreadCPUClock {
		t.Skip("needs a per-thread CPU clock (Linux)")
	}
	deadlines, err := measure.ParseDeadlines(*corpusAllocs, time.Minute)
	require.NoError(t, err)
	for _, d := range deadlines {
		for _, c := range ilptest.HardCorpus() {
			p := ilptest.Hard(c)
			runtime.GC()
			steps, gcs, err := ilp.TraceAllocs(p, d, -3*time.Millisecond, nil)
			require.NoError(t, err)
			line := fmt.Sprintf("%-26s %6v gc %d:", c.Name(), d, gcs)
			// the late path starts after the search, or after a validation
			// cut short (the fallback plan: no search)
			from := -1
			for x, s := range steps {
				if s.Step == "search" || s.Step == "validate" && from < 0 {
					from = x
				}
			}
			total, late := uint64(0), uint64(0)
			for x, s := range steps {
				total += s.Bytes
				if from >= 0 && x > from {
					late += s.Bytes
				}
				line += fmt.Sprintf(" %s@%.2fms+%dK", s.Step, float64(s.CPU)/1e6, s.Bytes>>10)
			}
			fmt.Fprintf(os.Stdout, "%s (total %d KB, after the search %d KB)\n", line, total>>10, late>>10)
			assert.LessOrEqual(t, total, uint64(3<<20+512*len(p.Jobs)), "%s %v: bytes allocated in the last 3 ms and after", c.Name(), d)
		}
	}
}
