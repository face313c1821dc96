package fairness

import (
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentUse runs Compute and Summarize from several goroutines on
// shared inputs (run with -race and -cpu 1,2,8): every result equals the
// serial one and the inputs are not modified.
func TestConcurrentUse(t *testing.T) {
	cluster := []TypeGPUs{{"t4", 24}, {"a100", 8}, {"rtx", 16}}
	iso := linear(1000, map[string]float64{"t4": 1, "a100": 4, "rtx": 2})
	var jobs []Job
	for i := 0; i < 40; i++ {
		jobs = append(jobs, Job{ID: string(rune('A' + i)), SharedJCT: float64(100 + 37*i%300), AvgJobs: float64(1 + i%9), Isolated: iso})
	}
	jobs[3].FairJCT = map[string]float64{"t4": 120, "rtx": 80}
	want, err := Compute(cluster, jobs, nil)
	require.NoError(t, err)
	rhos := Rhos(want)
	rhosCopy := append([]float64(nil), rhos...)
	wantS, err := Summarize(rhos)
	require.NoError(t, err)
	var wg sync.WaitGroup
	bad := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 10; k++ {
				got, err := Compute(cluster, jobs, nil)
				if err != nil || !reflect.DeepEqual(got, want) {
					bad <- "Compute"
				}
				if s, err := Summarize(rhos); err != nil || s != wantS {
					bad <- "Summarize"
				}
				if _, err := CDF(rhos); err != nil {
					bad <- "CDF"
				}
			}
		}()
	}
	wg.Wait()
	close(bad)
	for b := range bad {
		t.Error(b)
	}
	require.Equal(t, rhosCopy, rhos, "ratios modified (the summaries sort a copy)")
}
