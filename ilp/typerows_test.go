package ilp

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTypeRows looks up type names given as shared strings, as strings of
// their own, as substrings of one another's bytes (same address, other
// length) and unknown names, with few and many types, against a plain
// search of the sorted names.
func TestTypeRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, nt := range []int{1, 3, 8, typeScanMax, typeScanMax + 1, 70, 255} {
		var names []string
		for k := range nt {
			names = append(names, fmt.Sprintf("gpu%d", k))
		}
		slices.Sort(names)
		tr := newTypeRows(names)
		joined := strings.Join(names, "")
		for range 20000 {
			var s string
			switch rng.IntN(5) {
			case 0: // the name itself
				s = names[rng.IntN(nt)]
			case 1: // a copy with bytes of its own
				s = strings.Clone(names[rng.IntN(nt)])
			case 2: // a prefix of a name: same bytes, shorter
				n := names[rng.IntN(nt)]
				s = n[:rng.IntN(len(n)+1)]
			case 3: // a slice of all the names' bytes
				a := rng.IntN(len(joined))
				s = joined[a : a+rng.IntN(min(8, len(joined)-a)+1)]
			default:
				s = fmt.Sprintf("gpu%d", rng.IntN(2*nt))
			}
			want := int32(slices.Index(names, s))
			require.Equal(t, want, tr.row(s), "%d types, %q", nt, s)
		}
	}
}

// TestIDSet finds the first duplicate ID of random job lists, with IDs
// drawn from small and large sets (duplicates early, late and across the
// hashing batches), against a map.
func TestIDSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	for x := range 500 {
		n := 1 + rng.IntN(3*idBatch)
		jobs := make([]Job, n)
		for i := range jobs {
			jobs[i].ID = fmt.Sprint("j", rng.IntN(1+rng.IntN(10*n)))
		}
		s, seen := newIDSet(n), map[string]int{}
		for i := range jobs {
			want, dup := seen[jobs[i].ID]
			if !dup {
				want = -1
				seen[jobs[i].ID] = i
			}
			got := s.add(jobs, i)
			require.Equal(t, want, got, "case %d job %d", x, i)
			if got >= 0 {
				break
			}
		}
	}
}
