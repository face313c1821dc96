package simcli

import (
	"context"
	"io"
	"sync"

	"github.com/sia-sched/sia/sia/sim"
)

// runPolicies runs the policies of one scale, at most c.parallel at a time,
// and returns their outcomes in the order of -policy. Each policy gets its
// own fresh instances and the workloads are only read, so the outcomes do
// not depend on the number of goroutines; only the wall-clock columns do
// (the policies share the CPU). Progress lines go to stderr as runs finish.
func (r *Registry) runPolicies(ctx context.Context, c *config, cl sim.Cluster, truth sim.Truth, wls []*sim.Workload, stderr io.Writer) ([]outcome, error) {
	n := len(c.policies)
	outs := make([]outcome, n)
	errs := make([]error, n)
	progress := &lockedWriter{w: stderr}
	iso := sim.NewIsolatedRuns(truth) // the policies' FTF share their isolated runs
	if c.parallel <= 1 || n <= 1 {
		for i, name := range c.policies {
			if outs[i], errs[i] = r.runPolicy(ctx, c, name, cl, truth, iso, wls, progress); errs[i] != nil {
				return nil, errs[i]
			}
		}
		return outs, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, c.parallel)
	var wg sync.WaitGroup
	for i, name := range c.policies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-slots }()
			outs[i], errs[i] = r.runPolicy(ctx, c, name, cl, truth, iso, wls, progress)
			if errs[i] != nil {
				cancel() // the first failure stops the others
			}
		}()
	}
	wg.Wait()
	// Report the first failure in -policy order that is not a consequence of
	// the cancellation above.
	for _, err := range errs {
		if err != nil && err != context.Canceled {
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// lockedWriter serialises the progress lines of concurrent runs.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
