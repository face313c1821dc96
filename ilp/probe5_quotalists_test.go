package ilp

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe5JobQuotaLists: jobQuotaLists against a brute-force twin (every
// quota tested against every job) on random mixes of listed quotas and
// quotas over every job, and its memory on 2,000 jobs under 4,000 quotas
// over every job: it built a copy of the 4,000 indices per job (64 MB, some
// 100 ms of CPU before the clock was looked at, so that a solve past its
// deadline spent that long before returning); the jobs no listed quota
// covers now share one list.
func TestProbe5JobQuotaLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 5))
	for it := 0; it < 500; it++ {
		n := rng.IntN(12)
		p := &Problem{Jobs: make([]Job, n)}
		for q := rng.IntN(6); q > 0; q-- {
			var quota Quota
			if rng.IntN(3) == 0 {
				quota.AllJobs = true
			} else {
				for _, ji := range rng.Perm(n)[:rng.IntN(n+1)] {
					quota.Jobs = append(quota.Jobs, ji)
				}
			}
			p.Quotas = append(p.Quotas, quota)
		}
		got := jobQuotaLists(p)
		require.Len(t, got, n)
		for ji := 0; ji < n; ji++ {
			var want []int
			for qi := range p.Quotas {
				if p.Quotas[qi].AllJobs || slices.Contains(p.Quotas[qi].Jobs, ji) {
					want = append(want, qi)
				}
			}
			assert.Equal(t, want, got[ji], "it %d job %d, quotas %+v", it, ji, p.Quotas)
			assert.Equal(t, len(got[ji]), cap(got[ji]), "appending to one list must not write into another")
		}
	}
	p := &Problem{Jobs: make([]Job, 2000)}
	for qi := 0; qi < 4000; qi++ {
		p.Quotas = append(p.Quotas, Quota{Name: fmt.Sprint("q", qi), AllJobs: true, Limit: 1})
	}
	p.Quotas = append(p.Quotas, Quota{Jobs: []int{7, 1999}, Limit: 1})
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	lists := jobQuotaLists(p)
	runtime.ReadMemStats(&ms)
	assert.Len(t, lists[0], 4000)
	assert.Len(t, lists[7], 4001)
	assert.Less(t, ms.TotalAlloc-before, uint64(1<<20), "2,000 jobs × 4,000 quotas over every job")
}
