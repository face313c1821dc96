package sim

import (
	"math"
	"sort"
	"time"
)

// Summary pools the metrics of one policy over several workloads, as the
// published artifact's print_run_stats does.
type Summary struct {
	Policy    string
	Workloads int
	Jobs      int
	// Unfinished counts jobs still running when the simulation stopped.
	Unfinished int
	// AvgJCT is the mean JCT in seconds over all finished jobs pooled.
	AvgJCT float64
	// P99JCT is sorted(JCT)[floor(0.99·n)].
	P99JCT float64
	// Makespan is the mean over workloads of max(submit+JCT) − min(submit).
	Makespan float64
	// GPUHoursPerJob is the total allocated GPU-hours (every round a job holds
	// GPUs, including restore time) divided by the number of jobs.
	GPUHoursPerJob float64
	// RestartsPerJob is the total number of restarts divided by the jobs.
	RestartsPerJob float64
	// PolicyMedian and PolicyP95 are percentiles of the policy's wall time per
	// round (nearest rank).
	PolicyMedian, PolicyP95 time.Duration
	// JCTs are the pooled JCTs in seconds of finished jobs, sorted.
	JCTs []float64
}

// Summarize computes the pooled metrics of results of one policy.
func Summarize(results []*Result) Summary {
	var s Summary
	var gpuSec float64
	var restarts int
	var times []time.Duration
	for _, r := range results {
		if s.Policy == "" {
			s.Policy = r.Policy
		}
		s.Workloads++
		minSub, maxEnd := math.Inf(1), math.Inf(-1)
		for _, j := range r.Jobs {
			s.Jobs++
			gpuSec += j.GPUSeconds
			restarts += j.Restarts
			minSub = math.Min(minSub, j.Submit)
			if j.JCT < 0 {
				s.Unfinished++
				maxEnd = math.Max(maxEnd, r.End)
				continue
			}
			s.JCTs = append(s.JCTs, j.JCT)
			maxEnd = math.Max(maxEnd, j.Completion)
		}
		if len(r.Jobs) > 0 {
			s.Makespan += maxEnd - minSub
		}
		times = append(times, r.PolicyTimes...)
	}
	if s.Workloads > 0 {
		s.Makespan /= float64(s.Workloads)
	}
	sort.Float64s(s.JCTs)
	if n := len(s.JCTs); n > 0 {
		t := 0.0
		for _, v := range s.JCTs {
			t += v
		}
		s.AvgJCT = t / float64(n)
		s.P99JCT = s.JCTs[P99Index(n)]
	}
	if s.Jobs > 0 {
		s.GPUHoursPerJob = gpuSec / 3600 / float64(s.Jobs)
		s.RestartsPerJob = float64(restarts) / float64(s.Jobs)
	}
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	if len(times) > 0 {
		s.PolicyMedian = times[nearestRank(len(times), 0.5)]
		s.PolicyP95 = times[nearestRank(len(times), 0.95)]
	}
	return s
}

// P99Index returns floor(0.99·n), clamped to n−1: the artifact's p99 index.
func P99Index(n int) int {
	i := int(math.Floor(0.99 * float64(n)))
	if i >= n {
		i = n - 1
	}
	return i
}

func nearestRank(n int, q float64) int {
	i := int(math.Ceil(q*float64(n))) - 1
	if i < 0 {
		i = 0
	}
	if i >= n {
		i = n - 1
	}
	return i
}
