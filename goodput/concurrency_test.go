package goodput

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentUse calls Fit, Loss and Best from several goroutines on
// shared inputs (run with -race and -cpu 1,2,8): every call gives the serial
// answer and the inputs are not modified.
func TestConcurrentUse(t *testing.T) {
	obs := benchObservations()
	orig := append([]Observation(nil), obs...)
	m := goodModel()
	wantP, err := Fit(obs, &FitOptions{Starts: 2})
	require.NoError(t, err)
	wantL, err := Loss(obs, wantP)
	require.NoError(t, err)
	wantC, ok := m.Best(2, 8)
	require.True(t, ok)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 3; k++ {
				p, err := Fit(obs, &FitOptions{Starts: 2})
				if err != nil || p != wantP {
					errs <- "Fit differs"
				}
				if l, err := Loss(obs, wantP); err != nil || l != wantL {
					errs <- "Loss differs"
				}
				if c, ok := m.Best(2, 8); !ok || c != wantC {
					errs <- "Best differs"
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	require.Equal(t, orig, obs, "observations modified")
}
