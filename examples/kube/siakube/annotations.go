package siakube

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/strictjson"
	"github.com/sia-sched/sia/sia"
)

// Prefix is the one prefix of every label and annotation the controller reads
// or writes.
const Prefix = "sia.sched.io/"

// The opt-in label: only Jobs labelled LabelManaged=LabelManagedValue are
// ever read or written by the controller.
const (
	LabelManaged      = Prefix + "managed"
	LabelManagedValue = "true"
)

// User annotations: the job's description, read every round (the model
// annotations AnnInitBatch, AnnMaxBatch, AnnBatch, AnnLimits and AnnProfile only when
// the job's tracker is created, on first sight).
const (
	// AnnKind is adaptive (default), strong-scaling or rigid.
	AnnKind = Prefix + "kind"
	// AnnMinGPUs and AnnMaxGPUs bound an adaptive or strong-scaling job's GPUs.
	AnnMinGPUs = Prefix + "min-gpus"
	AnnMaxGPUs = Prefix + "max-gpus"
	// AnnGPUs is a rigid job's fixed GPU count.
	AnnGPUs = Prefix + "gpus"
	// AnnNonPreemptible ("true"/"false") keeps the job on its GPUs once it runs.
	AnnNonPreemptible = Prefix + "non-preemptible"
	// AnnApplication optionally names the model (cifar10, bert, …).
	AnnApplication = Prefix + "application"
	// AnnInitBatch is the initial global batch size and AnnMaxBatch the
	// largest an adaptive job may use.
	AnnInitBatch = Prefix + "init-batch"
	AnnMaxBatch  = Prefix + "max-batch"
	// AnnBatch is the fixed global batch size of a strong-scaling or rigid
	// job (bootstrap.Spec.FixedBatch), refused for adaptive jobs. Default:
	// AnnMaxBatch when given (manifests written before AnnBatch), else
	// AnnInitBatch.
	AnnBatch = Prefix + "batch"
	// AnnLimits lists the GPU types the job can run on with their per-GPU
	// batch bounds: "TYPE=MIN-MAX,TYPE=MIN-MAX".
	AnnLimits = Prefix + "local-batch-limits"
	// AnnProfile holds the 1-GPU profile points that seed the tracker, as JSON:
	// [{"type":"a100","localBatch":64,"stepTime":0.08,"syncTime":0}].
	AnnProfile = Prefix + "profile"
	// AnnRestartCost is the progress one checkpoint-restart wastes (a Go
	// duration, "90s"); default the scheduler's restart penalty.
	AnnRestartCost = Prefix + "restart-cost"
	// AnnRestoreDelay is how long a resumed job stays pinned after all its
	// pods run (a Go duration); default its restart cost.
	AnnRestoreDelay = Prefix + "restore-delay"
	// AnnPodGPUs is the pod layout: "node" (default: one pod per node with all
	// of the job's GPUs on it) or "1" (one pod per GPU; such a job resizes in
	// place when its nodes do not change).
	AnnPodGPUs = Prefix + "pod-gpus"
	// AnnMeasurement is written by the job's own agent (a patch of the Job):
	// the latest measurement as JSON, see Measurement.
	AnnMeasurement = Prefix + "measurement"
)

// Controller annotations: written by the controller on the Job and its pod
// template (pods read them through the downward API); never read back as
// input.
const (
	AnnOutGPUType     = Prefix + "gpu-type"
	AnnOutNodes       = Prefix + "assigned-nodes" // "node-a=8,node-b=8"
	AnnOutGPUsPerPod  = Prefix + "gpus-per-pod"
	AnnOutReplicas    = Prefix + "replicas"
	AnnOutLocalBatch  = Prefix + "local-batch"
	AnnOutAccumSteps  = Prefix + "accum-steps"
	AnnOutGlobalBatch = Prefix + "global-batch"
	AnnOutState       = Prefix + "state"
	AnnOutReason      = Prefix + "reason"
)

// Bounds on user input.
const (
	// MaxAnnotationBytes bounds every user annotation but AnnProfile.
	MaxAnnotationBytes = 4 << 10
	// MaxProfileBytes bounds AnnProfile.
	MaxProfileBytes = 64 << 10
	// MaxProfilePoints bounds the points of AnnProfile.
	MaxProfilePoints = 512
	// MaxTypes bounds the types of AnnLimits.
	MaxTypes = 64
	// MaxJobGPUs bounds GPU counts.
	MaxJobGPUs = 4096
	// MaxSeconds bounds step and sync times and durations (one day).
	MaxSeconds = 86400
)

// ErrAnnotation is the sentinel of every annotation error.
var ErrAnnotation = errors.New("siakube: invalid annotation")

// AnnotationError names the offending annotation of a job.
type AnnotationError struct {
	// Annotation is the key, Value the value (cut to 64 bytes).
	Annotation, Value string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *AnnotationError) Error() string {
	return fmt.Sprintf("annotation %s=%q: %s", e.Annotation, e.Value, e.Reason)
}

// Unwrap returns ErrAnnotation.
func (e *AnnotationError) Unwrap() error { return ErrAnnotation }

func annErr(key, val, format string, args ...any) error {
	if len(val) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(val[cut]) {
			cut--
		}
		val = val[:cut] + "…"
	}
	return &AnnotationError{Annotation: key, Value: val, Reason: fmt.Sprintf(format, args...)}
}

// ProfilePoint is one 1-GPU profile point of AnnProfile.
type ProfilePoint struct {
	Type       string  `json:"type"`
	LocalBatch int     `json:"localBatch"`
	StepTime   float64 `json:"stepTime"`
	SyncTime   float64 `json:"syncTime"`
}

// PodLayout says how a job's GPUs are split into pods.
type PodLayout int

const (
	// PodPerNode: one pod per node, holding all of the job's GPUs there.
	PodPerNode PodLayout = iota
	// PodPerGPU: one pod per GPU.
	PodPerGPU
)

// JobSpec is a job's description parsed from its annotations.
type JobSpec struct {
	Kind             sia.Kind
	MinGPUs, MaxGPUs int
	GPUs             int
	NonPreemptible   bool
	Application      string
	// Model is the tracker's spec (batch range and per-type limits).
	Model bootstrap.Spec
	// Profile are the seed points.
	Profile []ProfilePoint
	// RestartCost and RestoreDelay are zero when not given.
	RestartCost, RestoreDelay time.Duration
	Layout                    PodLayout
}

// Types returns the job's GPU types (the keys of Model.Limits), sorted.
func (s *JobSpec) Types() []string {
	out := make([]string, 0, len(s.Model.Limits))
	for t := range s.Model.Limits {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ParseJobSpec reads a job's description from its annotations. Every error
// wraps ErrAnnotation and names the annotation; all errors are reported
// (errors.Join). It never panics, whatever the values.
func ParseJobSpec(ann map[string]string) (JobSpec, error) {
	var s JobSpec
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range []string{AnnKind, AnnMinGPUs, AnnMaxGPUs, AnnGPUs, AnnNonPreemptible, AnnApplication,
		AnnInitBatch, AnnMaxBatch, AnnBatch, AnnLimits, AnnRestartCost, AnnRestoreDelay, AnnPodGPUs} {
		if v, ok := ann[k]; ok && len(v) > MaxAnnotationBytes {
			return s, annErr(k, v, "longer than %d bytes", MaxAnnotationBytes)
		}
	}
	switch v := ann[AnnKind]; v {
	case "", "adaptive":
		s.Kind = sia.Adaptive
	case "strong-scaling":
		s.Kind = sia.StrongScaling
	case "rigid":
		s.Kind = sia.Rigid
	default:
		add(annErr(AnnKind, v, "want adaptive, strong-scaling or rigid"))
	}
	var err error
	s.MinGPUs, err = intAnn(ann, AnnMinGPUs, 0, MaxJobGPUs)
	add(err)
	s.MaxGPUs, err = intAnn(ann, AnnMaxGPUs, 0, MaxJobGPUs)
	add(err)
	s.GPUs, err = intAnn(ann, AnnGPUs, 0, MaxJobGPUs)
	add(err)
	if s.MinGPUs > 0 && s.MaxGPUs > 0 && s.MinGPUs > s.MaxGPUs {
		add(annErr(AnnMinGPUs, ann[AnnMinGPUs], "larger than %s (%d)", AnnMaxGPUs, s.MaxGPUs))
	}
	if s.Kind == sia.Rigid && s.GPUs == 0 {
		add(annErr(AnnGPUs, ann[AnnGPUs], "a rigid job needs a GPU count ≥ 1"))
	}
	if s.Kind != sia.Rigid && ann[AnnGPUs] != "" {
		add(annErr(AnnGPUs, ann[AnnGPUs], "only rigid jobs have a fixed count (use %s and %s)", AnnMinGPUs, AnnMaxGPUs))
	}
	switch v := ann[AnnNonPreemptible]; v {
	case "", "false":
	case "true":
		s.NonPreemptible = true
	default:
		add(annErr(AnnNonPreemptible, v, "want true or false"))
	}
	s.Application = ann[AnnApplication]
	if !utf8.ValidString(s.Application) {
		add(annErr(AnnApplication, s.Application, "not UTF-8"))
	}
	s.Model.InitBatch, err = intAnn(ann, AnnInitBatch, 1, bootstrap.MaxCount)
	add(err)
	s.Model.MaxBatch, err = intAnn(ann, AnnMaxBatch, 1, bootstrap.MaxCount)
	add(err)
	if _, ok := ann[AnnInitBatch]; !ok {
		add(annErr(AnnInitBatch, "", "required"))
	}
	if _, ok := ann[AnnMaxBatch]; !ok {
		s.Model.MaxBatch = s.Model.InitBatch
	}
	s.Model.FixedBatch, err = intAnn(ann, AnnBatch, 1, bootstrap.MaxCount)
	add(err)
	switch _, ok := ann[AnnBatch]; {
	case ok && s.Kind == sia.Adaptive:
		add(annErr(AnnBatch, ann[AnnBatch], "only strong-scaling and rigid jobs have a fixed batch (an adaptive job's bound is %s)", AnnMaxBatch))
	case !ok && s.Kind != sia.Adaptive:
		s.Model.FixedBatch = s.Model.MaxBatch // max-batch, else init-batch
	}
	s.Model.Limits, err = parseLimits(ann[AnnLimits])
	add(err)
	s.RestartCost, err = durAnn(ann, AnnRestartCost)
	add(err)
	s.RestoreDelay, err = durAnn(ann, AnnRestoreDelay)
	add(err)
	switch v := ann[AnnPodGPUs]; v {
	case "", "node":
		s.Layout = PodPerNode
	case "1":
		s.Layout = PodPerGPU
	default:
		add(annErr(AnnPodGPUs, v, "want node or 1"))
	}
	s.Profile, err = parseProfile(ann[AnnProfile], s.Model.Limits)
	add(err)
	if len(errs) == 0 {
		if err := s.Model.Validate(); err != nil {
			add(annErr(AnnLimits, ann[AnnLimits], "%v", err))
		}
	}
	return s, errors.Join(errs...)
}

func intAnn(ann map[string]string, key string, lo, hi int) (int, error) {
	v, ok := ann[key]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, annErr(key, v, "not an integer")
	}
	if n < lo || n > hi {
		return 0, annErr(key, v, "want %d to %d", lo, hi)
	}
	return n, nil
}

func durAnn(ann map[string]string, key string) (time.Duration, error) {
	v, ok := ann[key]
	if !ok || v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, annErr(key, v, "not a duration (e.g. 90s)")
	}
	if d < 0 || d > MaxSeconds*time.Second {
		return 0, annErr(key, v, "want 0 to 24h")
	}
	return d, nil
}

// validType reports whether t can be a GPU type name (a label value).
func validType(t string) bool {
	if t == "" || len(t) > 63 {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func parseLimits(v string) (map[string]goodput.Limits, error) {
	if v == "" {
		return nil, annErr(AnnLimits, v, "required: TYPE=MIN-MAX,… (per-GPU batch bounds of each GPU type the job can use)")
	}
	out := map[string]goodput.Limits{}
	for _, item := range strings.Split(v, ",") {
		t, rng, ok := strings.Cut(strings.TrimSpace(item), "=")
		lo, hi, ok2 := strings.Cut(rng, "-")
		if !ok || !ok2 {
			return nil, annErr(AnnLimits, v, "item %q: want TYPE=MIN-MAX", item)
		}
		if !validType(t) {
			return nil, annErr(AnnLimits, v, "item %q: GPU type must be a label value (1-63 of A-Z a-z 0-9 - _ .)", item)
		}
		if _, dup := out[t]; dup {
			return nil, annErr(AnnLimits, v, "type %q given twice", t)
		}
		l, err1 := strconv.Atoi(lo)
		h, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || l < 1 || h < l || h > bootstrap.MaxCount {
			return nil, annErr(AnnLimits, v, "item %q: want 1 ≤ MIN ≤ MAX ≤ %d", item, bootstrap.MaxCount)
		}
		out[t] = goodput.Limits{MinLocalBatch: l, MaxLocalBatch: h}
		if len(out) > MaxTypes {
			return nil, annErr(AnnLimits, v, "more than %d types", MaxTypes)
		}
	}
	return out, nil
}

func finiteTime(x float64) bool { return !math.IsNaN(x) && x >= 0 && x <= MaxSeconds }

func parseProfile(v string, limits map[string]goodput.Limits) ([]ProfilePoint, error) {
	if v == "" {
		return nil, nil
	}
	if len(v) > MaxProfileBytes {
		return nil, annErr(AnnProfile, v, "longer than %d bytes", MaxProfileBytes)
	}
	var pts []ProfilePoint
	if err := decodeStrict(v, &pts); err != nil {
		return nil, annErr(AnnProfile, v, "want a JSON list of {type, localBatch, stepTime, syncTime}: %v", err)
	}
	if len(pts) > MaxProfilePoints {
		return nil, annErr(AnnProfile, v, "more than %d points", MaxProfilePoints)
	}
	for i, p := range pts {
		l, ok := limits[p.Type]
		switch {
		case limits != nil && !ok:
			return nil, annErr(AnnProfile, v, "point %d: type %q is not in %s", i, p.Type, AnnLimits)
		case p.LocalBatch < 1 || p.LocalBatch > bootstrap.MaxCount || (ok && (p.LocalBatch < l.MinLocalBatch || p.LocalBatch > l.MaxLocalBatch)):
			return nil, annErr(AnnProfile, v, "point %d: localBatch %d outside the type's limits", i, p.LocalBatch)
		case !finiteTime(p.StepTime) || p.StepTime <= 0:
			return nil, annErr(AnnProfile, v, "point %d: stepTime must be in (0, %d] s", i, MaxSeconds)
		case !finiteTime(p.SyncTime) || p.SyncTime >= p.StepTime:
			return nil, annErr(AnnProfile, v, "point %d: syncTime must be in [0, stepTime)", i)
		}
	}
	return pts, nil
}

// decodeStrict decodes one JSON value with no unknown fields, no key given
// twice or in another case, and nothing after it.
func decodeStrict(v string, out any) error { return strictjson.Decode([]byte(v), out) }

// Measurement is what a job's agent reports in AnnMeasurement: one
// configuration's step and sync time and, optionally, the gradient
// statistics. Job, when given, must be the job's own ID (namespace/name);
// Type, Nodes and Replicas must be the job's current allocation, or the
// measurement is refused (it would describe another configuration).
type Measurement struct {
	Job        string   `json:"job,omitempty"`
	Type       string   `json:"type"`
	Nodes      int      `json:"nodes"`
	Replicas   int      `json:"replicas"`
	LocalBatch int      `json:"localBatch"`
	StepTime   float64  `json:"stepTime"`
	SyncTime   float64  `json:"syncTime"`
	GradSqr    *float64 `json:"gradSqr,omitempty"`
	GradVar    *float64 `json:"gradVar,omitempty"`
}

// ParseMeasurement reads AnnMeasurement for the job jobID. Errors wrap
// ErrAnnotation.
func ParseMeasurement(jobID, v string) (Measurement, error) {
	var m Measurement
	if len(v) > MaxAnnotationBytes {
		return m, annErr(AnnMeasurement, v, "longer than %d bytes", MaxAnnotationBytes)
	}
	if err := decodeStrict(v, &m); err != nil {
		return m, annErr(AnnMeasurement, v, "want JSON {type, nodes, replicas, localBatch, stepTime, syncTime[, gradSqr, gradVar]}: %v", err)
	}
	switch {
	case m.Job != "" && m.Job != jobID:
		return m, annErr(AnnMeasurement, v, "names job %q, not this job %q", m.Job, jobID)
	case !validType(m.Type):
		return m, annErr(AnnMeasurement, v, "type %q is not a GPU type name", m.Type)
	case m.Nodes < 1 || m.Nodes > MaxJobGPUs || m.Replicas < 1 || m.Replicas > MaxJobGPUs:
		// replicas may be below nodes for a pipeline that spans nodes; the
		// job's tracker checks the shape against its stages
		return m, annErr(AnnMeasurement, v, "want nodes and replicas in [1, %d]", MaxJobGPUs)
	case m.LocalBatch < 1 || m.LocalBatch > bootstrap.MaxCount:
		return m, annErr(AnnMeasurement, v, "localBatch must be in [1, %d]", bootstrap.MaxCount)
	case !finiteTime(m.StepTime) || m.StepTime <= 0:
		return m, annErr(AnnMeasurement, v, "stepTime must be in (0, %d] s", MaxSeconds)
	case !finiteTime(m.SyncTime) || m.SyncTime >= m.StepTime:
		return m, annErr(AnnMeasurement, v, "syncTime must be in [0, stepTime)")
	case (m.GradSqr == nil) != (m.GradVar == nil):
		return m, annErr(AnnMeasurement, v, "give both gradSqr and gradVar, or neither")
	}
	if m.GradSqr != nil {
		if err := (goodput.GradStats{Sqr: *m.GradSqr, Var: *m.GradVar}).Validate(); err != nil {
			return m, annErr(AnnMeasurement, v, "gradient statistics: %v", err)
		}
	}
	return m, nil
}

// Bootstrap returns the tracker measurement of m.
func (m Measurement) Bootstrap() bootstrap.Measurement {
	bm := bootstrap.Measurement{Nodes: m.Nodes, Replicas: m.Replicas, LocalBatch: m.LocalBatch,
		StepTime: m.StepTime, SyncTime: m.SyncTime}
	if m.GradSqr != nil {
		bm.Grad = &goodput.GradStats{Sqr: *m.GradSqr, Var: *m.GradVar}
	}
	return bm
}

// NewTracker builds the job's tracker from its spec and seeds it with its
// profile points (one Seed per type, in sorted order).
func NewTracker(s *JobSpec) (*bootstrap.Tracker, error) {
	tr, err := bootstrap.New(s.Model, nil)
	if err != nil {
		return nil, annErr(AnnLimits, "", "%v", err)
	}
	byType := map[string][]goodput.Observation{}
	for _, p := range s.Profile {
		byType[p.Type] = append(byType[p.Type], goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: p.LocalBatch,
			StepTime: p.StepTime, SyncTime: p.SyncTime})
	}
	for _, t := range s.Types() {
		if rows := byType[t]; len(rows) > 0 {
			if err := tr.Seed(t, rows...); err != nil {
				return nil, annErr(AnnProfile, "", "type %s: %v", t, err)
			}
		}
	}
	return tr, nil
}
