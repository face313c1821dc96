package placement

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentUse runs Place from several goroutines on the same nodes and
// requests (run with -race and -cpu 1,2,8): each result equals the serial
// one, and the caller's slices (including Current) are not modified.
func TestConcurrentUse(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	sc := randomScenario(rng, true, true)
	nodes, reqs := sc.nodes, sc.reqs
	nodesCopy := slices.Clone(nodes)
	reqsCopy := make([]Request, len(reqs))
	for i, r := range reqs {
		reqsCopy[i] = r
		reqsCopy[i].Current = slices.Clone(r.Current)
	}
	want, err := Place(nodes, reqs)
	require.NoError(t, err)
	var wg sync.WaitGroup
	diff := make(chan int, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 5; k++ {
				got, err := Place(nodes, reqs)
				if err != nil || !reflect.DeepEqual(got, want) {
					diff <- g
				}
			}
		}(g)
	}
	wg.Wait()
	close(diff)
	for g := range diff {
		t.Errorf("goroutine %d got a different result", g)
	}
	require.Equal(t, nodesCopy, nodes)
	require.Equal(t, reqsCopy, reqs)
}
