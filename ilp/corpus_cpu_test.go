package ilp_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/measure"
)

var corpusCPU = flag.String("corpus.cpu", "", "TestCorpusGapOnCPU: the deadlines (e.g. 20ms,100ms) at which to solve the hard corpus on the thread CPU clock")

var corpusExtra = flag.Bool("corpus.extra", false, "TestCorpusGapOnCPU: also the harder quota instances beside the corpus (ilptest.HardExtra)")

var corpusReps = flag.Int("corpus.reps", 1, "TestCorpusGapOnCPU: solves per instance and deadline")

// TestCorpusGapOnCPU solves every instance of the hard corpus under each
// deadline of -corpus.cpu on the solving thread's CPU clock (TraceSolve:
// what the solver does then does not depend on the machine's load, which
// examples/ilp-deadline's wall-clock deadlines do), and prints per
// instance the relative gap, the CPU time past the deadline and where the
// dual and the greedy incumbents ended (-corpus.reps solves each, an
// instance within the target when its worst is; -corpus.extra adds
// ilptest.HardExtra). It checks the gap's sign and the
// contract's allowance. Without the flag it is skipped: it takes about
// twelve solves per deadline.
//
//	go test ./ilp -run TestCorpusGapOnCPU -corpus.cpu 20ms,100ms,1s -v
func TestCorpusGapOnCPU(t *testing.T) {
	if *corpusCPU == "" {
		t.Skip("no -corpus.cpu")
	}
	if !ilp.ThreadCPUClock {
		t.Skip("needs a per-thread CPU clock (Linux)")
	}
	deadlines, err := measure.ParseDeadlines(*corpusCPU, time.Minute)
	require.NoError(t, err)
	for _, d := range deadlines {
		within := 0
		corpus := ilptest.HardCorpus()
		if *corpusExtra {
			corpus = append(corpus, ilptest.HardExtra()...)
		}
		for _, c := range corpus {
			p := ilptest.Hard(c)
			worst := 0.0
			for range max(1, *corpusReps) {
				over, steps, sol, err := ilp.TraceSolve(p, d, nil)
				require.NoError(t, err)
				require.NoError(t, p.Check(sol.Assignment))
				gap := measure.RelGap(sol.Objective, sol.Bound, p.Sense == ilp.Minimize)
				require.False(t, gap < 0, "%s: a bound on the wrong side", c.Name())
				worst = math.Max(worst, gap)
				at := map[string]time.Duration{}
				for _, s := range steps {
					at[s.Step] = s.CPU
				}
				fmt.Fprintf(os.Stdout, "%-26s %6v gap %.2e  %-8v cpu-over %6.2fms  build %7.2fms  dual %7.2fms  greedies %7.2fms\n",
					c.Name(), d, gap, sol.Status, ms(over), ms(at["build"]+d), ms(at["dual"]+d), ms(max(at["quickGreedy"], at["marginalGreedy"], at["exchange"], at["refine"], at["refineGreedy"])+d))
				require.LessOrEqual(t, over, ilp.Slack(d)+ilp.Slack(d)/2, "%s: CPU past %v", c.Name(), d)
			}
			if worst <= 1e-3 {
				within++
			}
		}
		fmt.Fprintf(os.Stdout, "%v: %d of %d within 1e-3\n", d, within, len(corpus))
	}
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
