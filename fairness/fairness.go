package fairness

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// ErrInvalidInput is wrapped by every error for bad caller data (use
// errors.Is). The concrete error is an *InputError (use errors.As).
var ErrInvalidInput = errors.New("fairness: invalid input")

// ErrUnavailable may be returned (possibly wrapped) by an IsolatedFunc when
// the job cannot run on a GPU type at all (for example, it does not fit its
// memory). That type is then left out of the job's ratio and the weights of
// the other types are renormalised, as the published artifact does for types
// whose isolated run fails. If no type is left, Compute returns an error.
var ErrUnavailable = errors.New("fairness: job cannot run on this GPU type")

// InputError describes bad input. Job and Type name the offending entity when
// known; Index is the position of a ratio in a slice passed to the summary
// functions (−1 otherwise).
type InputError struct {
	Job    string
	Type   string
	Index  int
	Field  string
	Reason string
}

// Error implements error.
func (e *InputError) Error() string {
	s := "fairness: invalid input:"
	if e.Job != "" {
		s += fmt.Sprintf(" job %q", e.Job)
	}
	if e.Type != "" {
		s += fmt.Sprintf(" type %q", e.Type)
	}
	if e.Index >= 0 {
		s += fmt.Sprintf(" ratio %d", e.Index)
	}
	if e.Field != "" {
		s += " " + e.Field
	}
	return s + ": " + e.Reason
}

// Unwrap returns ErrInvalidInput.
func (e *InputError) Unwrap() []error { return []error{ErrInvalidInput} }

// MaxGPUs bounds the total GPUs of the cluster passed to Compute (so that
// sums cannot overflow and shares stay exact in float64).
const MaxGPUs = 1 << 40

// TypeGPUs is the number of GPUs of one type in the shared cluster (N_g).
type TypeGPUs struct {
	Type string
	GPUs int
}

// IsolatedFunc returns a job's completion time when it runs alone on gpus
// GPUs (gpus ≥ 1) of type gpuType, for example from a single-job simulation.
// Return an error wrapping ErrUnavailable if the job cannot run on the type.
type IsolatedFunc func(gpuType string, gpus int) (float64, error)

// Job is what the fairness computation needs to know about one job.
type Job struct {
	ID string
	// SharedJCT is T_shared, the job's completion time (finish − submit)
	// in the shared cluster.
	SharedJCT float64
	// AvgJobs is N_avg, the average number of jobs contending (running or
	// queued, the job included) while the job was active.
	AvgJobs float64
	// FairJCT optionally gives T_fair,g per type directly: the job's
	// completion time alone on its fair share of type g. When it is non-nil
	// it is used and Isolated is ignored; types missing from it are
	// unavailable to the job.
	FairJCT map[string]float64
	// Isolated gives the job's isolated completion time on k GPUs of a type;
	// T_fair,g is interpolated from it at the fair share (see FairJCT, the
	// function).
	Isolated IsolatedFunc
}

// Share selects how a job's fair share of type g is computed. In both modes
// the share is capped at N_g: a job cannot run alone on more GPUs of a type
// than the cluster has.
type Share int

const (
	// ShareOfType (the default, the paper): N_g / N_avg GPUs of type g.
	ShareOfType Share = iota
	// ShareOfCluster (the published artifact): N_total / N_avg GPUs.
	ShareOfCluster
)

// Combine selects how per-type ratios are combined.
type Combine int

const (
	// MeanOfRatios (the default, paper Eq. 6): ρ = Σ_g w_g · T_shared/T_fair,g.
	MeanOfRatios Combine = iota
	// RatioOfMeans (the published artifact): ρ = T_shared / Σ_g w_g · T_fair,g.
	RatioOfMeans
)

// Options selects the paper's or the artifact's variant. A nil *Options means
// the paper's: ShareOfType and MeanOfRatios. The weights are w_g = N_g /
// N_total over the types available to the job.
type Options struct {
	Share   Share
	Combine Combine
}

// TypeRatio is the part of a job's ratio that comes from one GPU type.
type TypeRatio struct {
	Type    string
	Weight  float64 // w_g, renormalised over the types available to the job
	Share   float64 // fair share in GPUs (0 when FairJCT was given)
	FairJCT float64 // T_fair,g
	Rho     float64 // ρ_g = T_shared / T_fair,g
}

// Ratio is a job's finish-time-fairness ratio ρ and its per-type parts (in
// cluster order; unavailable types are left out).
type Ratio struct {
	Job     string
	Rho     float64
	PerType []TypeRatio
}

func finiteNonNeg(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 }

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Compute returns the finish-time-fairness ratio of every job (paper Eq. 6,
// design §7): for each type g with N_g GPUs, ρ_g = T_shared / T_fair,g where
// T_fair,g is the job's completion time alone on its fair share of type g,
// and ρ = Σ_g (N_g / N_total) · ρ_g. ρ ≤ 1 means the job finished no later
// than it would have on its fair share.
//
// Errors (wrapping ErrInvalidInput, as *InputError, naming the job or type)
// for an empty or duplicate type, GPUs ≤ 0, an empty or duplicate job ID, a
// NaN, infinite or negative SharedJCT, an AvgJobs that is not finite and
// positive, neither FairJCT nor Isolated given, an isolated or fair JCT that
// is not finite and positive, an error from Isolated other than
// ErrUnavailable (wrapped, naming the job and type), and a job available on
// no type.
func Compute(cluster []TypeGPUs, jobs []Job, opts *Options) ([]Ratio, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Share != ShareOfType && o.Share != ShareOfCluster {
		return nil, &InputError{Index: -1, Field: "Options.Share", Reason: fmt.Sprintf("unknown value %d", o.Share)}
	}
	if o.Combine != MeanOfRatios && o.Combine != RatioOfMeans {
		return nil, &InputError{Index: -1, Field: "Options.Combine", Reason: fmt.Sprintf("unknown value %d", o.Combine)}
	}
	total := 0
	seenType := map[string]bool{}
	for _, t := range cluster {
		switch {
		case t.Type == "":
			return nil, &InputError{Index: -1, Field: "Type", Reason: "empty GPU type"}
		case seenType[t.Type]:
			return nil, &InputError{Type: t.Type, Index: -1, Field: "Type", Reason: "duplicate GPU type"}
		case t.GPUs <= 0:
			return nil, &InputError{Type: t.Type, Index: -1, Field: "GPUs", Reason: fmt.Sprintf("must be > 0, got %d", t.GPUs)}
		case t.GPUs > MaxGPUs-total:
			return nil, &InputError{Type: t.Type, Index: -1, Field: "GPUs", Reason: fmt.Sprintf("%d GPUs bring the cluster above MaxGPUs = %d", t.GPUs, MaxGPUs)}
		}
		seenType[t.Type] = true
		total += t.GPUs
	}
	out := make([]Ratio, 0, len(jobs))
	seenJob := map[string]bool{}
	for _, j := range jobs {
		if j.ID == "" {
			return nil, &InputError{Index: -1, Field: "ID", Reason: "empty job ID"}
		}
		if seenJob[j.ID] {
			return nil, &InputError{Job: j.ID, Index: -1, Field: "ID", Reason: "duplicate job"}
		}
		seenJob[j.ID] = true
		r, err := computeJob(cluster, total, j, o)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func computeJob(cluster []TypeGPUs, total int, j Job, o Options) (Ratio, error) {
	if !finiteNonNeg(j.SharedJCT) {
		return Ratio{}, &InputError{Job: j.ID, Index: -1, Field: "SharedJCT", Reason: "must be finite and ≥ 0, got " + fmtFloat(j.SharedJCT)}
	}
	if j.FairJCT == nil {
		if j.Isolated == nil {
			return Ratio{}, &InputError{Job: j.ID, Index: -1, Field: "Isolated", Reason: "neither FairJCT nor Isolated given"}
		}
		if !finiteNonNeg(j.AvgJobs) || j.AvgJobs == 0 {
			return Ratio{}, &InputError{Job: j.ID, Index: -1, Field: "AvgJobs", Reason: "must be finite and > 0, got " + fmtFloat(j.AvgJobs)}
		}
	}
	// Report the first unknown type in sorted order, so that the error does
	// not depend on map iteration order.
	var unknown []string
	for t := range j.FairJCT {
		if !slices.ContainsFunc(cluster, func(c TypeGPUs) bool { return c.Type == t }) {
			unknown = append(unknown, t)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return Ratio{}, &InputError{Job: j.ID, Type: unknown[0], Index: -1, Field: "FairJCT", Reason: "type not in the cluster"}
	}
	r := Ratio{Job: j.ID}
	wsum := 0.0
	for _, c := range cluster {
		tr := TypeRatio{Type: c.Type, Weight: float64(c.GPUs)}
		if j.FairJCT != nil {
			v, ok := j.FairJCT[c.Type]
			if !ok {
				continue
			}
			tr.FairJCT = v
		} else {
			share := float64(c.GPUs) / j.AvgJobs
			if o.Share == ShareOfCluster {
				share = float64(total) / j.AvgJobs
			}
			share = math.Min(share, float64(c.GPUs))
			tr.Share = share
			v, err := FairJCT(func(k int) (float64, error) { return j.Isolated(c.Type, k) }, share)
			if errors.Is(err, ErrUnavailable) {
				continue
			}
			if err != nil {
				var ie *InputError
				if errors.As(err, &ie) {
					return Ratio{}, &InputError{Job: j.ID, Type: c.Type, Index: -1, Field: "Isolated", Reason: ie.Reason}
				}
				return Ratio{}, fmt.Errorf("fairness: job %q type %q: isolated JCT: %w", j.ID, c.Type, err)
			}
			tr.FairJCT = v
		}
		if !finiteNonNeg(tr.FairJCT) || tr.FairJCT == 0 {
			return Ratio{}, &InputError{Job: j.ID, Type: c.Type, Index: -1, Field: "FairJCT", Reason: "must be finite and > 0, got " + fmtFloat(tr.FairJCT)}
		}
		tr.Rho = j.SharedJCT / tr.FairJCT
		if math.IsInf(tr.Rho, 0) {
			return Ratio{}, &InputError{Job: j.ID, Type: c.Type, Index: -1, Field: "FairJCT",
				Reason: fmt.Sprintf("SharedJCT %s / FairJCT %s overflows", fmtFloat(j.SharedJCT), fmtFloat(tr.FairJCT))}
		}
		wsum += tr.Weight
		r.PerType = append(r.PerType, tr)
	}
	if len(r.PerType) == 0 {
		return Ratio{}, &InputError{Job: j.ID, Index: -1, Field: "Isolated", Reason: "the job can run on no GPU type of the cluster"}
	}
	meanFair := 0.0
	for i := range r.PerType {
		tr := &r.PerType[i]
		tr.Weight /= wsum
		r.Rho += tr.Weight * tr.Rho
		meanFair += tr.Weight * tr.FairJCT
	}
	if o.Combine == RatioOfMeans {
		r.Rho = j.SharedJCT / meanFair
	}
	if math.IsInf(r.Rho, 0) || math.IsNaN(r.Rho) {
		return Ratio{}, &InputError{Job: j.ID, Index: -1, Field: "SharedJCT", Reason: "the ratio ρ overflows: SharedJCT " + fmtFloat(j.SharedJCT) + " is too large for the fair JCTs"}
	}
	return r, nil
}

// FairJCT interpolates a job's completion time alone on a fractional share of
// GPUs from its isolated completion times on whole GPU counts, as the
// published artifact does (ftf_simulator.py): for share ≥ 1,
//
//	T(share) = T(⌊share⌋) + (T(⌈share⌉) − T(⌊share⌋)) · (share − ⌊share⌋),
//
// and for share < 1 the job time-shares one GPU: T(share) = T(1) / share.
// isolated(k) is called only for k ≥ 1. Errors wrap ErrInvalidInput for a
// share that is not finite and positive or an isolated time that is not
// finite and positive; errors from isolated are returned wrapped.
func FairJCT(isolated func(gpus int) (float64, error), share float64) (float64, error) {
	if isolated == nil {
		return 0, &InputError{Index: -1, Field: "isolated", Reason: "nil function"}
	}
	if !finiteNonNeg(share) || share == 0 {
		return 0, &InputError{Index: -1, Field: "share", Reason: "must be finite and > 0, got " + fmtFloat(share)}
	}
	if share > math.MaxInt32 {
		return 0, &InputError{Index: -1, Field: "share", Reason: "too large: " + fmtFloat(share)}
	}
	call := func(k int) (float64, error) {
		v, err := isolated(k)
		if err != nil {
			return 0, fmt.Errorf("on %d GPUs: %w", k, err)
		}
		if !finiteNonNeg(v) || v == 0 {
			return 0, &InputError{Index: -1, Field: "isolated JCT", Reason: fmt.Sprintf("on %d GPUs must be finite and > 0, got %s", k, fmtFloat(v))}
		}
		return v, nil
	}
	if share < 1 {
		hi, err := call(1)
		if err != nil {
			return 0, err
		}
		return hi / share, nil
	}
	lo := math.Floor(share)
	lov, err := call(int(lo))
	if err != nil {
		return 0, err
	}
	if share == lo {
		return lov, nil
	}
	hiv, err := call(int(lo) + 1)
	if err != nil {
		return 0, err
	}
	return lov + (hiv-lov)*(share-lo), nil
}

// Rhos returns the ρ of each ratio, in order.
func Rhos(rs []Ratio) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Rho
	}
	return out
}

func checkRhos(rhos []float64) error {
	for i, x := range rhos {
		if !finiteNonNeg(x) {
			return &InputError{Index: i, Field: "rho", Reason: "must be finite and ≥ 0, got " + fmtFloat(x)}
		}
	}
	return nil
}

// Worst returns the largest ratio (0 for none). Errors (wrapping
// ErrInvalidInput, naming the index) for NaN, infinite or negative ratios.
func Worst(rhos []float64) (float64, error) {
	if err := checkRhos(rhos); err != nil {
		return 0, err
	}
	w := 0.0
	for _, x := range rhos {
		w = math.Max(w, x)
	}
	return w, nil
}

// UnfairFraction returns the fraction of jobs with ρ > 1 (0 for none). The
// artifact divides by the jobs with ρ > 0 instead, which differs only when a
// job has ρ = 0 (zero shared completion time). Errors as Worst.
func UnfairFraction(rhos []float64) (float64, error) {
	if err := checkRhos(rhos); err != nil {
		return 0, err
	}
	if len(rhos) == 0 {
		return 0, nil
	}
	n := 0
	for _, x := range rhos {
		if x > 1 {
			n++
		}
	}
	return float64(n) / float64(len(rhos)), nil
}

// Point is a point of an empirical CDF: the fraction P of jobs with ρ ≤ Rho.
type Point struct {
	Rho, P float64
}

// CDF returns the empirical CDF of the ratios: one point per distinct value,
// ascending, the last with P = 1 (nil for none). Errors as Worst.
func CDF(rhos []float64) ([]Point, error) {
	if err := checkRhos(rhos); err != nil {
		return nil, err
	}
	s := slices.Clone(rhos)
	slices.Sort(s)
	var out []Point
	for i, x := range s {
		if i+1 < len(s) && s[i+1] == x {
			continue
		}
		out = append(out, Point{Rho: x, P: float64(i+1) / float64(len(s))})
	}
	return out, nil
}

// Percentile returns the q-th percentile (0 ≤ q ≤ 100) of the ratios with
// linear interpolation between order statistics (numpy's default, which the
// artifact's summary uses). Errors as Worst, and for no ratios or q outside
// [0, 100].
func Percentile(rhos []float64, q float64) (float64, error) {
	if err := checkRhos(rhos); err != nil {
		return 0, err
	}
	if len(rhos) == 0 {
		return 0, &InputError{Index: -1, Field: "rhos", Reason: "no ratios"}
	}
	if math.IsNaN(q) || q < 0 || q > 100 {
		return 0, &InputError{Index: -1, Field: "q", Reason: "must be in [0, 100], got " + fmtFloat(q)}
	}
	s := slices.Clone(rhos)
	slices.Sort(s)
	return percentileSorted(s, q), nil
}

func percentileSorted(s []float64, q float64) float64 {
	pos := q / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (s[lo+1]-s[lo])*(pos-float64(lo))
}

// Summary condenses a set of ratios.
type Summary struct {
	Jobs           int
	Worst          float64 // largest ρ
	UnfairFraction float64 // fraction of jobs with ρ > 1
	Mean           float64
	// Percentiles at 0, 50, 90, 95, 99 and 100 (numpy linear), as the
	// artifact's summary prints them.
	P0, P50, P90, P95, P99, P100 float64
}

// Summarize computes a Summary (the zero Summary for no ratios). Errors as
// Worst.
func Summarize(rhos []float64) (Summary, error) {
	if err := checkRhos(rhos); err != nil {
		return Summary{}, err
	}
	if len(rhos) == 0 {
		return Summary{}, nil
	}
	s := slices.Clone(rhos)
	slices.Sort(s)
	sum := Summary{Jobs: len(s), Worst: s[len(s)-1]}
	unfair := 0
	for _, x := range s {
		sum.Mean += x
		if x > 1 {
			unfair++
		}
	}
	sum.Mean /= float64(len(s))
	if math.IsInf(sum.Mean, 0) {
		// The sum of large finite ratios overflowed: use a running mean.
		sum.Mean = 0
		for i, x := range s {
			sum.Mean += (x - sum.Mean) / float64(i+1)
		}
	}
	sum.UnfairFraction = float64(unfair) / float64(len(s))
	sum.P0, sum.P50, sum.P90 = percentileSorted(s, 0), percentileSorted(s, 50), percentileSorted(s, 90)
	sum.P95, sum.P99, sum.P100 = percentileSorted(s, 95), percentileSorted(s, 99), percentileSorted(s, 100)
	return sum, nil
}
