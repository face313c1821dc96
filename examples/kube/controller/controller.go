package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sia-sched/sia/examples/kube/siakube"
	"github.com/sia-sched/sia/sia"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// Defaults of Config.
const (
	DefaultPeriod        = 60 * time.Second
	DefaultDebounce      = 2 * time.Second
	DefaultRoundDeadline = 30 * time.Second
	DefaultRestoreDelay  = 30 * time.Second
)

// Config configures a Controller. Zero fields mean the defaults.
type Config struct {
	// Namespace is the controller's own namespace: its records (ConfigMaps)
	// and Lease live there. Required.
	Namespace string
	// Period is the time between rounds (DefaultPeriod); Debounce the quiet
	// time after an event (new job, node change) before an early round
	// (DefaultDebounce).
	Period, Debounce time.Duration
	// RoundDeadline bounds a whole round, API writes included
	// (DefaultRoundDeadline). The scheduling step itself is bounded by
	// Options.RoundTimeout (sia's default 5 s) within it.
	RoundDeadline time.Duration
	// Options are the scheduler's options (nil = the paper's defaults).
	Options *sia.Options
	// Nodes says how Nodes are read.
	Nodes siakube.NodeConfig
	// RestoreDelay is the pin after a resume of a job that gives neither
	// restore-delay nor restart-cost (DefaultRestoreDelay).
	RestoreDelay time.Duration
	// Clock is the time source (RealClock).
	Clock Clock
	// Recorder receives the Events of the jobs; nil records them to the
	// API server.
	Recorder record.EventRecorder
	// Metrics, if not nil, observes every round and its steps.
	Metrics Metrics
	// Logger (nil = slog.Default()).
	Logger *slog.Logger
}

// Metrics observes rounds: the scheduler's steps (sia.Options.Observer) and
// the controller's report of each round.
type Metrics interface {
	Observe(sia.Event)
	ObserveRound(*Report)
}

// Report is what one round did.
type Report struct {
	Now      time.Time
	Duration time.Duration
	// Err is the round's error (nil when it completed; per-job problems are
	// not round errors).
	Err error
	// Plan is the scheduler's plan (nil when the round failed before it).
	Plan *sia.Plan
	// Actions counts the plan's decisions by action name.
	Actions map[string]int
	// Phases counts the opted-in jobs by phase, plus "invalid".
	Phases map[string]int
	// GPUs counts the GPUs assigned per GPU type.
	GPUs map[string]int
	// Rejected and Cleared are as in siakube.SnapshotResult; Invalid lists
	// jobs whose annotations were refused, with the error.
	Rejected, Invalid map[string]string
	Cleared           map[string]string
	// Skipped are the nodes left out and why.
	Skipped []siakube.SkippedNode
	// Writes is the number of Job writes; JobErrors the per-job write
	// failures (the round goes on).
	Writes    int
	JobErrors []string
}

// Controller runs Sia's rounds on a cluster. Create it with New, start its
// informers with Start, then either Run (one replica, or under leader
// election: RunWithLeaderElection) or call RunRound directly (tests).
type Controller struct {
	cfg    Config
	client kubernetes.Interface
	sched  *sia.Scheduler
	store  store
	log    *slog.Logger

	factory, jobFactory informers.SharedInformerFactory
	nodes               corelisters.NodeLister
	pods                corelisters.PodLister
	jobs                batchlisters.JobLister
	synced              []cache.InformerSynced

	kick chan struct{}

	mu        sync.Mutex // held by a round
	entries   map[string]*entry
	invalid   map[types.UID]string // last message shown per invalid job
	lastRound time.Time
}

// New returns a controller for the client's cluster.
func New(client kubernetes.Interface, cfg Config) (*Controller, error) {
	if cfg.Namespace == "" {
		return nil, errors.New("controller: Config.Namespace is required")
	}
	if cfg.Period == 0 {
		cfg.Period = DefaultPeriod
	}
	if cfg.Debounce == 0 {
		cfg.Debounce = DefaultDebounce
	}
	if cfg.RoundDeadline == 0 {
		cfg.RoundDeadline = DefaultRoundDeadline
	}
	if cfg.RestoreDelay == 0 {
		cfg.RestoreDelay = DefaultRestoreDelay
	}
	if cfg.Period < 0 || cfg.Debounce < 0 || cfg.RoundDeadline < 0 || cfg.RestoreDelay < 0 {
		return nil, errors.New("controller: negative Period, Debounce, RoundDeadline or RestoreDelay")
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	opts := cfg.Options.WithDefaults()
	if cfg.Metrics != nil {
		if opts.Observer != nil {
			first := opts.Observer
			opts.Observer = func(e sia.Event) { first(e); cfg.Metrics.Observe(e) }
		} else {
			opts.Observer = cfg.Metrics.Observe
		}
	}
	sched, err := sia.New(&opts)
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	if cfg.Recorder == nil {
		b := record.NewBroadcaster()
		b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
		cfg.Recorder = b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "sia-controller"})
	}
	c := &Controller{cfg: cfg, client: client, sched: sched, store: store{client: client, namespace: cfg.Namespace},
		log: cfg.Logger, kick: make(chan struct{}, 1), invalid: map[types.UID]string{}}
	c.factory = informers.NewSharedInformerFactory(client, 0)
	c.jobFactory = informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = siakube.LabelManaged + "=" + siakube.LabelManagedValue }))
	ni := c.factory.Core().V1().Nodes()
	pi := c.factory.Core().V1().Pods()
	ji := c.jobFactory.Batch().V1().Jobs()
	c.nodes, c.pods, c.jobs = ni.Lister(), pi.Lister(), ji.Lister()
	c.synced = []cache.InformerSynced{ni.Informer().HasSynced, pi.Informer().HasSynced, ji.Informer().HasSynced}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.Kick() },
		UpdateFunc: func(old, cur any) { c.kickOnChange(old, cur) },
		DeleteFunc: func(any) { c.Kick() },
	}
	if _, err := ni.Informer().AddEventHandler(h); err != nil {
		return nil, err
	}
	if _, err := ji.Informer().AddEventHandler(h); err != nil {
		return nil, err
	}
	// Pods of Jobs: a round soon after they start running or go away
	// (restores end, start gates open), not at the next period.
	ph := cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Pod)
			n, ok2 := cur.(*corev1.Pod)
			if ok1 && ok2 && controllerOf(n) != "" && o.Status.Phase != n.Status.Phase {
				c.Kick()
			}
		},
		DeleteFunc: func(obj any) {
			if p, ok := obj.(*corev1.Pod); !ok || controllerOf(p) != "" {
				c.Kick()
			}
		},
	}
	if _, err := pi.Informer().AddEventHandler(ph); err != nil {
		return nil, err
	}
	return c, nil
}

// kickOnChange asks for an early round when a node's schedulability or a
// Job's spec or labels changed, not on every status heartbeat.
func (c *Controller) kickOnChange(old, cur any) {
	switch o := old.(type) {
	case *corev1.Node:
		n, ok := cur.(*corev1.Node)
		if !ok || o.Spec.Unschedulable != n.Spec.Unschedulable || len(o.Spec.Taints) != len(n.Spec.Taints) ||
			o.Labels[c.cfg.Nodes.TypeLabel] != n.Labels[c.cfg.Nodes.TypeLabel] || nodeReady(o) != nodeReady(n) {
			c.Kick()
		}
	case *batchv1.Job:
		j, ok := cur.(*batchv1.Job)
		if !ok || siakube.Finished(o) != siakube.Finished(j) || o.Generation != j.Generation {
			c.Kick()
		}
	default:
		c.Kick()
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Kick asks for a round after the debounce time.
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Start starts the informers and waits for their caches.
func (c *Controller) Start(ctx context.Context) error {
	c.factory.Start(ctx.Done())
	c.jobFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return errors.New("controller: informer caches did not sync")
	}
	return nil
}

// Synced reports whether the informer caches have synced (readiness).
func (c *Controller) Synced() bool {
	for _, s := range c.synced {
		if !s() {
			return false
		}
	}
	return true
}

// LastRound returns the time of the last completed round (zero if none).
func (c *Controller) LastRound() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastRound
}

// Load reads the persisted records from the API server; a leader calls it
// before its first round (RunRound calls it when it has not run).
func (c *Controller) Load(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loadLocked(ctx)
}

func (c *Controller) loadLocked(ctx context.Context) error {
	entries, bad, err := c.store.load(ctx)
	if err != nil {
		return err
	}
	for _, e := range bad {
		c.log.Warn("sia: record skipped", "err", e)
	}
	c.entries = entries
	return nil
}

// Run runs rounds every Period and after events (debounced) until ctx ends.
// The caller must be the only active replica (see RunWithLeaderElection).
func (c *Controller) Run(ctx context.Context) error {
	if err := c.Load(ctx); err != nil {
		return err
	}
	for {
		if _, err := c.RunRound(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("sia: round failed", "err", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		period := c.cfg.Clock.After(c.cfg.Period)
	wait:
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-period:
				break wait
			case <-c.kick:
				select {
				case <-ctx.Done():
					return nil
				case <-c.cfg.Clock.After(c.cfg.Debounce):
				}
				// Events during the debounce are folded into this round.
				select {
				case <-c.kick:
				default:
				}
				break wait
			}
		}
	}
}

// job is one opted-in Job during a round.
type job struct {
	obj  *batchv1.Job
	id   string
	spec *siakube.JobSpec
	e    *entry
	pods []*corev1.Pod // live pods
	// running counts the running pods, onNode the live pods' GPUs per node.
	running int
	onNode  map[string]int
	step    siakube.Step
}

func (j *job) layout() siakube.PodLayout {
	if j.spec == nil {
		return siakube.PodPerNode
	}
	return j.spec.Layout
}

// RunRound runs one round now: reads the cluster, advances the jobs' phases,
// schedules, and writes the Jobs and records. Per-job problems (bad
// annotations, conflicts, a job deleted meanwhile) are reported and never
// fail the round.
func (c *Controller) RunRound(ctx context.Context) (rep *Report, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	now := c.cfg.Clock.Now()
	rep = &Report{Now: now, Actions: map[string]int{}, Phases: map[string]int{}, GPUs: map[string]int{},
		Rejected: map[string]string{}, Invalid: map[string]string{}, Cleared: map[string]string{}}
	defer func() {
		rep.Err = err
		rep.Duration = time.Since(start)
		if err == nil {
			c.lastRound = now
		}
		if c.cfg.Metrics != nil {
			c.cfg.Metrics.ObserveRound(rep)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RoundDeadline)
	defer cancel()
	if c.entries == nil {
		if err := c.loadLocked(ctx); err != nil {
			return rep, err
		}
	}
	nodeObjs, err := c.nodes.List(labels.Everything())
	if err != nil {
		return rep, err
	}
	podObjs, err := c.pods.List(labels.Everything())
	if err != nil {
		return rep, err
	}
	jobObjs, err := c.jobs.List(labels.Everything())
	if err != nil {
		return rep, err
	}

	jobs, byUID := c.readJobs(ctx, now, jobObjs, podObjs, rep)
	inRound := map[types.UID]bool{}
	for _, j := range jobs {
		inRound[j.obj.UID] = true
	}
	external := externalGPUs(podObjs, inRound, c.cfg.Nodes.Resource)
	gpuNodes, skipped := siakube.ReadNodes(nodeObjs, external, c.cfg.Nodes)
	rep.Skipped = skipped

	inputs := make([]*siakube.JobInput, len(jobs))
	for i, j := range jobs {
		submitted := j.e.rec.FirstSeen
		if submitted.IsZero() { // a record written before FirstSeen existed
			submitted = j.obj.CreationTimestamp.Time
		}
		inputs[i] = &siakube.JobInput{ID: j.id, Spec: j.spec, Submitted: submitted, Record: j.e.rec, Tracker: j.e.tracker}
	}
	res := siakube.BuildSnapshot(now, gpuNodes, inputs)
	if len(res.Rejected) > 0 {
		// Rejected jobs' pods hold GPUs the round must not give away.
		for _, j := range jobs {
			if _, ok := res.Rejected[j.id]; ok {
				delete(inRound, j.obj.UID)
			}
		}
		external = externalGPUs(podObjs, inRound, c.cfg.Nodes.Resource)
		gpuNodes, rep.Skipped = siakube.ReadNodes(nodeObjs, external, c.cfg.Nodes)
		res = siakube.BuildSnapshot(now, gpuNodes, inputs)
	}
	byID := map[string]*job{}
	for _, j := range jobs {
		byID[j.id] = j
	}
	for id, why := range res.Cleared {
		rep.Cleared[id] = why
		j := byID[id]
		siakube.Clear(j.e.rec, "allocation cleared: "+why)
		c.cfg.Recorder.Event(j.obj, corev1.EventTypeWarning, "SiaAllocationCleared", truncate(why))
	}
	for id, e := range res.Rejected {
		rep.Rejected[id] = e.Error()
		c.markInvalid(ctx, byID[id], "the scheduler refuses the job: "+e.Error(), rep)
	}

	sctx := ctx
	if c.cfg.Options == nil || c.cfg.Options.RoundTimeout == 0 {
		var scancel context.CancelFunc
		sctx, scancel = context.WithTimeout(ctx, sia.DefaultRoundTimeout)
		defer scancel()
	}
	var plan sia.Plan
	if len(res.Snapshot.Jobs) > 0 {
		plan, err = c.sched.Round(sctx, res.Snapshot)
		if err != nil {
			c.saveAll(ctx, jobs, rep)
			return rep, fmt.Errorf("round: %w", err)
		}
		rep.Plan = &plan
	}
	for i, d := range plan.Decisions {
		j := byID[res.Jobs[i].ID]
		rep.Actions[d.Action.String()]++
		step, err := siakube.Advance(j.e.rec, d)
		if err != nil {
			rep.JobErrors = append(rep.JobErrors, err.Error())
		}
		j.step = step
	}

	c.execute(ctx, now, jobs, nodeObjs, external, rep)
	c.saveAll(ctx, jobs, rep)
	c.collect(ctx, byUID, rep)
	for _, j := range jobs {
		if _, bad := rep.Rejected[j.id]; bad {
			continue
		}
		rep.Phases[string(j.e.rec.Phase)]++
		if a := j.e.rec.Assigned; a.Running() {
			rep.GPUs[a.Type] += a.GPUs
		}
	}
	rep.Phases["invalid"] += len(rep.Invalid)
	return rep, nil
}

// readJobs turns the listed Jobs into the round's jobs: finished ones are
// left out, bad annotations mark a job invalid; each gets its entry (new or
// persisted) and its phase advanced by what its pods do.
func (c *Controller) readJobs(ctx context.Context, now time.Time, objs []*batchv1.Job, pods []*corev1.Pod, rep *Report) ([]*job, map[types.UID]bool) {
	podsOf := map[types.UID][]*corev1.Pod{}
	for _, p := range pods {
		if ref := controllerOf(p); ref != "" && siakube.PodLive(p) {
			podsOf[ref] = append(podsOf[ref], p)
		}
	}
	sort.Slice(objs, func(a, b int) bool { return siakube.JobID(objs[a]) < siakube.JobID(objs[b]) })
	seen := map[types.UID]bool{}
	var out []*job
	for _, o := range objs {
		if !siakube.Managed(o) || siakube.Finished(o) || o.DeletionTimestamp != nil {
			continue
		}
		seen[o.UID] = true
		j := &job{obj: o, id: siakube.JobID(o), onNode: map[string]int{}}
		for _, p := range podsOf[o.UID] {
			j.pods = append(j.pods, p)
			if p.Spec.NodeName != "" {
				j.onNode[p.Spec.NodeName] += siakube.PodGPUs(p, c.cfg.Nodes.Resource)
			}
			if siakube.PodRunning(p) {
				j.running++
			}
		}
		if !siakube.Indexed(o) {
			c.markInvalid(ctx, j, "not an Indexed Job (spec.completionMode must be Indexed)", rep)
			continue
		}
		spec, err := siakube.ParseJobSpec(o.Annotations)
		if err != nil {
			c.markInvalid(ctx, j, err.Error(), rep)
			continue
		}
		j.spec = &spec
		e := c.entries[string(o.UID)]
		if e == nil || e.rec.UID != string(o.UID) || e.tracker == nil {
			tr, err := siakube.NewTracker(&spec)
			if err != nil {
				c.markInvalid(ctx, j, err.Error(), rep)
				continue
			}
			e = &entry{rec: &siakube.Record{Job: j.id, UID: string(o.UID), Phase: siakube.PhaseQueued, FirstSeen: now}, tracker: tr}
			if old := c.entries[string(o.UID)]; old != nil {
				e.written, e.rv = old.written, old.rv
			}
			c.entries[string(o.UID)] = e
		}
		j.e = e
		delete(c.invalid, o.UID)
		c.progress(now, j)
		out = append(out, j)
	}
	return out, seen
}

// progress advances a job's phase by what its pods do, and takes its agent's
// latest measurement into its tracker.
func (c *Controller) progress(now time.Time, j *job) {
	r := j.e.rec
	if (r.Phase == siakube.PhaseRestoring || r.Phase == siakube.PhaseRunning) && siakube.Suspended(j.obj) {
		// Suspended behind the controller's back: resume it through the
		// start gate again.
		r.Phase, r.RestoreUntil = siakube.PhaseStarting, time.Time{}
	}
	switch r.Phase {
	case siakube.PhaseRestoring:
		pods, _ := r.Assigned.Pods(j.layout())
		if j.running >= pods && pods > 0 {
			if r.RestoreUntil.IsZero() {
				r.RestoreUntil = now.Add(c.restoreDelay(j.spec))
			}
			if !now.Before(r.RestoreUntil) {
				r.Phase, r.RestoreUntil = siakube.PhaseRunning, time.Time{}
			}
		}
	case siakube.PhaseStopping:
		if siakube.Suspended(j.obj) && len(j.pods) == 0 {
			r.Phase = siakube.PhaseQueued
		}
	case siakube.PhaseRunning:
		c.measure(j)
	}
}

func (c *Controller) restoreDelay(s *siakube.JobSpec) time.Duration {
	switch {
	case s.RestoreDelay > 0:
		return s.RestoreDelay
	case s.RestartCost > 0:
		return s.RestartCost
	}
	return c.cfg.RestoreDelay
}

// measure takes the job's measurement annotation into its tracker when it
// changed; a measurement of another configuration, or a malformed one, is
// refused with a Warning event.
func (c *Controller) measure(j *job) {
	raw, ok := j.obj.Annotations[siakube.AnnMeasurement]
	r := j.e.rec
	if !ok || raw == r.Measurement {
		return
	}
	r.Measurement = raw
	m, err := siakube.ParseMeasurement(j.id, raw)
	if err == nil {
		a := r.Assigned
		if m.Type != a.Type || m.Nodes != a.Nodes() || m.Replicas != a.Replicas {
			err = fmt.Errorf("measurement of %d replicas on %d %s node(s), but the job runs %d replicas on %d %s node(s)",
				m.Replicas, m.Nodes, m.Type, a.Replicas, a.Nodes(), a.Type)
		} else {
			_, err = j.e.tracker.Observe(m.Type, m.Bootstrap())
		}
	}
	if err != nil {
		c.cfg.Recorder.Event(j.obj, corev1.EventTypeWarning, "SiaMeasurementRefused", truncate(err.Error()))
	}
}

// markInvalid shows a job why it is left out: an annotation, a condition
// and (when the message changes) a Warning event. Its pods are left alone.
func (c *Controller) markInvalid(ctx context.Context, j *job, msg string, rep *Report) {
	msg = truncate(msg)
	rep.Invalid[j.id] = msg
	if c.invalid[j.obj.UID] == msg {
		return
	}
	c.invalid[j.obj.UID] = msg
	c.cfg.Recorder.Event(j.obj, corev1.EventTypeWarning, "SiaInvalid", msg)
	o, err := c.writeJob(ctx, j.obj, func(o *batchv1.Job) bool {
		return siakube.SetAnnotations(&o.Annotations, map[string]string{siakube.AnnOutState: "invalid", siakube.AnnOutReason: msg})
	}, rep)
	if err != nil {
		rep.JobErrors = append(rep.JobErrors, err.Error())
	}
	if o != nil {
		c.setCondition(ctx, o, corev1.ConditionFalse, "InvalidAnnotations", msg, rep)
	}
}

// collect deletes the records of Jobs that are gone, finished or no longer
// opted in.
func (c *Controller) collect(ctx context.Context, live map[types.UID]bool, rep *Report) {
	for uid := range c.entries {
		if live[types.UID(uid)] {
			continue
		}
		if err := c.store.remove(ctx, uid); err != nil {
			rep.JobErrors = append(rep.JobErrors, err.Error())
			continue
		}
		delete(c.entries, uid)
		delete(c.invalid, types.UID(uid))
	}
}

func (c *Controller) saveAll(ctx context.Context, jobs []*job, rep *Report) {
	for _, j := range jobs {
		if err := c.store.save(ctx, j.e); err != nil {
			rep.JobErrors = append(rep.JobErrors, err.Error())
		}
	}
}

// controllerOf returns the UID of a pod's controlling Job, or "".
func controllerOf(p *corev1.Pod) types.UID {
	for _, r := range p.OwnerReferences {
		if r.Controller != nil && *r.Controller && r.Kind == "Job" {
			return r.UID
		}
	}
	return ""
}

// externalGPUs returns, per node, the GPUs of live pods bound there that
// belong to no job of the round.
func externalGPUs(pods []*corev1.Pod, inRound map[types.UID]bool, r corev1.ResourceName) map[string]int {
	out := map[string]int{}
	for _, p := range pods {
		if p.Spec.NodeName == "" || !siakube.PodLive(p) || inRound[controllerOf(p)] {
			continue
		}
		if g := siakube.PodGPUs(p, r); g > 0 {
			out[p.Spec.NodeName] += g
		}
	}
	return out
}

func truncate(s string) string {
	const max = 1024
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}
