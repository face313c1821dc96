package fairness

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzFloat decodes 8 bytes as a float64 (any bit pattern: NaN, ±Inf,
// subnormal, negative).
func fuzzFloat(data *[]byte) float64 {
	if len(*data) < 8 {
		return 1
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(*data))
	*data = (*data)[8:]
	return v
}

func fuzzByte(data *[]byte) int {
	if len(*data) == 0 {
		return 0
	}
	b := (*data)[0]
	*data = (*data)[1:]
	return int(b)
}

// FuzzCompute decodes arbitrary bytes into a cluster and jobs (fair JCTs
// given directly or isolated times from a table, with any float bit
// patterns) and checks that Compute never panics, returns a typed
// ErrInvalidInput error or one finite ratio ≥ 0 per job whose weights sum to
// 1, and gives the same answer twice.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{2, 4, 8, 1, 0, 0, 0, 0, 0, 0, 0x59, 0x40, 0, 0, 0, 0, 0, 0, 0x10, 0x40, 1})
	f.Add([]byte{1, 255, 3, 0, 1, 2, 3, 4, 5, 6, 7, 0xf0, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		nt := fuzzByte(&data) % 4
		var cluster []TypeGPUs
		for i := 0; i < nt; i++ {
			cluster = append(cluster, TypeGPUs{Type: fmt.Sprintf("t%d", fuzzByte(&data)%5), GPUs: fuzzByte(&data) - 8})
		}
		nj := fuzzByte(&data) % 5
		var jobs []Job
		for i := 0; i < nj; i++ {
			j := Job{ID: fmt.Sprintf("j%d", fuzzByte(&data)%6), SharedJCT: fuzzFloat(&data), AvgJobs: fuzzFloat(&data)}
			switch fuzzByte(&data) % 3 {
			case 0:
				j.FairJCT = map[string]float64{}
				for k := fuzzByte(&data) % 4; k > 0; k-- {
					j.FairJCT[fmt.Sprintf("t%d", fuzzByte(&data)%6)] = fuzzFloat(&data)
				}
			case 1:
				table := []float64{fuzzFloat(&data), fuzzFloat(&data), fuzzFloat(&data)}
				unavailable := fuzzByte(&data)
				j.Isolated = func(typ string, k int) (float64, error) {
					if int(typ[1]-'0') == unavailable%5 {
						return 0, ErrUnavailable
					}
					return table[k%3] * float64(1+k%7), nil
				}
			}
			jobs = append(jobs, j)
		}
		opts := &Options{Share: Share(fuzzByte(&data) % 3), Combine: Combine(fuzzByte(&data) % 3)}
		rs, err := Compute(cluster, jobs, opts)
		rs2, err2 := Compute(cluster, jobs, opts)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, err.Error(), err2.Error())
			return
		}
		require.NoError(t, err2)
		require.Equal(t, rs, rs2)
		require.Len(t, rs, len(jobs))
		for i, r := range rs {
			require.Equal(t, jobs[i].ID, r.Job)
			require.False(t, math.IsNaN(r.Rho) || math.IsInf(r.Rho, 0) || r.Rho < 0, "job %s rho %v", r.Job, r.Rho)
			w := 0.0
			for _, tr := range r.PerType {
				w += tr.Weight
				require.Greater(t, tr.FairJCT, 0.0)
			}
			require.InDelta(t, 1, w, 1e-9)
		}
		_, err = Summarize(Rhos(rs))
		require.NoError(t, err)
	})
}

// FuzzSummaries checks Worst, UnfairFraction, CDF, Percentile and Summarize
// on arbitrary float bit patterns: a typed error for a bad ratio, else
// consistent results (Worst = P100 = the CDF's last point, fractions in
// [0, 1], a finite mean between P0 and P100, order-independent).
func FuzzSummaries(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40}, 50.0)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x7f}, 99.0)
	f.Fuzz(func(t *testing.T, data []byte, q float64) {
		var rhos []float64
		for len(data) >= 8 && len(rhos) < 64 {
			rhos = append(rhos, fuzzFloat(&data))
		}
		s, err := Summarize(rhos)
		if err != nil {
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			require.ErrorIs(t, err, ErrInvalidInput)
			require.GreaterOrEqual(t, ie.Index, 0)
			require.Less(t, ie.Index, len(rhos))
			_, err = Worst(rhos)
			require.Error(t, err)
			_, err = CDF(rhos)
			require.Error(t, err)
			return
		}
		w, err := Worst(rhos)
		require.NoError(t, err)
		u, err := UnfairFraction(rhos)
		require.NoError(t, err)
		cdf, err := CDF(rhos)
		require.NoError(t, err)
		if len(rhos) == 0 {
			require.Equal(t, Summary{}, s)
			require.Nil(t, cdf)
			return
		}
		require.Equal(t, w, s.Worst)
		require.Equal(t, w, s.P100)
		require.Equal(t, u, s.UnfairFraction)
		require.True(t, u >= 0 && u <= 1)
		require.Equal(t, w, cdf[len(cdf)-1].Rho)
		require.Equal(t, 1.0, cdf[len(cdf)-1].P)
		require.False(t, math.IsNaN(s.Mean) || math.IsInf(s.Mean, 0))
		require.GreaterOrEqual(t, s.Mean, s.P0*(1-1e-12))
		require.LessOrEqual(t, s.Mean, s.P100*(1+1e-12))
		p, err := Percentile(rhos, q)
		if math.IsNaN(q) || q < 0 || q > 100 {
			require.ErrorIs(t, err, ErrInvalidInput)
		} else {
			require.NoError(t, err)
			require.True(t, p >= s.P0 && p <= s.P100, "p%v = %v outside [%v, %v]", q, p, s.P0, s.P100)
		}
		rev := slices.Clone(rhos)
		slices.Reverse(rev)
		s2, err := Summarize(rev)
		require.NoError(t, err)
		require.Equal(t, s.Worst, s2.Worst)
		require.Equal(t, s.P50, s2.P50)
	})
}
