package configset

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentUse queries one Set from several goroutines (run with -race
// and -cpu 1,2,8): every answer equals the serial one, and callers may modify
// the slices they get back without affecting others.
func TestConcurrentUse(t *testing.T) {
	s, err := New([]NodeGroup{{Type: "a", GPUsPerNode: 8, Nodes: 4}, {Type: "b", GPUsPerNode: 6, Nodes: 3}}, &Options{MaxGPUs: 16})
	require.NoError(t, err)
	f := JobFilter{MinGPUs: 2, ReplicaSize: map[string]int{"b": 2}}
	wantAll, wantF := s.Configs(), s.ForJob(f)
	wantB := s.ByType("b")
	var wg sync.WaitGroup
	bad := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				all := s.Configs()
				if !equalConfigs(all, wantAll) {
					bad <- "Configs"
				}
				all[0].GPUs = -1 // the caller owns the copy
				if got, err := s.Filter(f); err != nil || !equalConfigs(got, wantF) {
					bad <- "Filter"
				}
				b := s.ByType("b")
				if !equalConfigs(b, wantB) {
					bad <- "ByType"
				}
				b[0].Nodes = 99
				if _, ok := s.Index(wantAll[len(wantAll)-1]); !ok {
					bad <- "Index"
				}
			}
		}()
	}
	wg.Wait()
	close(bad)
	for b := range bad {
		t.Error(b)
	}
}

func equalConfigs(a, b []Config) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
