package configset

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzFilter builds a set and a job filter from arbitrary values (negative
// bounds, replica sizes for unknown types, negative replica sizes) and checks
// Filter against a direct reading of its rules: a typed error for a bad
// filter, else exactly the configurations (in Configs order) within the GPU
// bounds whose GPUs are a multiple of the type's replica size; ForJob agrees;
// Index finds every returned configuration.
func FuzzFilter(f *testing.F) {
	f.Add(8, 4, 6, 3, 0, 0, "a", 2, "b", 4)
	f.Add(6, 2, 12, 2, 4, 16, "b", 3, "zz", -1)
	f.Add(7, 5, 1, 1, -1, 0, "a", 0, "a", 1)
	f.Fuzz(func(t *testing.T, ga, na, gb, nb, minG, maxG int, t1 string, p1 int, t2 string, p2 int) {
		s, err := New([]NodeGroup{{Type: "a", GPUsPerNode: ga % 40, Nodes: na % 40}, {Type: "b", GPUsPerNode: gb % 40, Nodes: nb % 40}}, nil)
		if err != nil {
			var ge *GroupError
			require.True(t, errors.As(err, &ge))
			require.ErrorIs(t, err, ErrInvalidInput)
			return
		}
		fl := JobFilter{MinGPUs: minG, MaxGPUs: maxG, ReplicaSize: map[string]int{t1: p1, t2: p2}}
		got, err := s.Filter(fl)
		if err != nil {
			var fe *FilterError
			require.True(t, errors.As(err, &fe))
			require.ErrorIs(t, err, ErrInvalidInput)
			require.Nil(t, s.ForJob(fl))
			bad := minG < 0 || maxG < 0 || (maxG > 0 && minG > maxG) || p1 < 0 || p2 < 0
			require.True(t, bad, "rejected a good filter: %v", err)
			return
		}
		var want []Config
		for _, c := range s.Configs() {
			if minG > 0 && c.GPUs < minG || maxG > 0 && c.GPUs > maxG {
				continue
			}
			if p := fl.ReplicaSize[c.Type]; p > 1 && c.GPUs%p != 0 {
				continue
			}
			want = append(want, c)
		}
		require.Equal(t, want, got, fmt.Sprintf("filter %+v", fl))
		require.Equal(t, got, s.ForJob(fl))
		for _, c := range got {
			i, ok := s.Index(c)
			require.True(t, ok)
			require.Equal(t, c, s.Configs()[i])
		}
	})
}
