// Command replay runs the Sia controller against a real etcd and
// kube-apiserver (internal/testenv) on a replayed workload, with compressed
// time, and prints its job completion times next to those of
// examples/simulate (policy sia, -variant paper) for the same jobs, then the
// controller's /metrics.
//
// The simulator (package sim) is the cluster's physics: it submits the jobs
// at their trace times, charges restore delays and progress from the
// measured profiles, and reports measurements. Each simulated 60 s round,
// replay (1) creates the newly submitted jobs as suspended, opted-in Indexed
// Jobs (kind, GPU bounds, batch limits and the 1-GPU seed profiles as
// annotations), (2) marks finished jobs Complete, (3) patches each running
// job's latest measurement (step and sync time, gradient statistics from
// the profiles) onto its Job as its agent would, (4) sets the controller's
// clock to the simulated time, runs one controller round under the
// controller's ServiceAccount and role, and lets the fake kubelet run the
// pods, and (5) hands the simulator, as each job's allocation, the GPUs of
// the job's running pods. A job whose pods do not run (being stopped or
// waiting for GPUs) makes no progress that round.
//
//	go run ./cmd/replay [-workload DIR/workload-1.csv] [-hours 2] [-max-hours 24]
//
// It needs SIA_K8S_BIN (hack/build-test-binaries.sh) and SIA_DATA.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/examples/kube/internal/testenv"
	"github.com/sia-sched/sia/examples/kube/metrics"
	"github.com/sia-sched/sia/examples/kube/siakube"
	"github.com/sia-sched/sia/examples/simulate/simcli"
	"github.com/sia-sched/sia/internal/numtext"
	"github.com/sia-sched/sia/sia/sim"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
}

type flags struct {
	workload, data, rbac, cluster string
	hours, maxHours               float64
}

func run() error {
	data := os.Getenv("SIA_DATA")
	if data == "" {
		data = filepath.Join("..", "..", "..", "shared", "data")
	}
	var f flags
	flag.StringVar(&f.workload, "workload", filepath.Join(data, "workloads", "saturn", "workload-1.csv"), "workload CSV")
	flag.StringVar(&f.data, "data", filepath.Join(data, "profiles"), "profiles folder (the ground truth)")
	flag.StringVar(&f.rbac, "rbac", filepath.Join("deploy", "rbac.yaml"), "the controller's RBAC YAML")
	flag.StringVar(&f.cluster, "cluster", "heterogeneous", "cluster (sim.ParseCluster): heterogeneous is 64 GPUs of t4, a100 and rtx")
	numtext.FloatVar(flag.CommandLine, &f.hours, "hours", 2, "replay the jobs submitted in the first this many hours")
	numtext.FloatVar(flag.CommandLine, &f.maxHours, "max-hours", 24, "stop the replay after this many simulated hours")
	flag.Parse()
	ctx := context.Background()

	cl, err := sim.ParseCluster(f.cluster, 1)
	if err != nil {
		return err
	}
	truth, err := sim.LoadTrace(f.data, cl.Types())
	if err != nil {
		return err
	}
	wl, err := sim.LoadWorkload(f.workload)
	if err != nil {
		return err
	}
	var kept []sim.JobSpec
	for _, j := range wl.Jobs {
		if j.Submit < f.hours*3600 {
			kept = append(kept, j)
		}
	}
	wl.Jobs = kept
	fmt.Printf("replay: %s, %d jobs submitted in the first %.0f h, cluster %s (%d GPUs)\n", f.workload, len(kept), f.hours, cl, cl.TotalGPUs())

	simJCT, err := simulate(ctx, f, wl)
	if err != nil {
		return fmt.Errorf("examples/simulate: %w", err)
	}

	env, err := testenv.Start(ctx, nil)
	if err != nil {
		return err
	}
	defer env.Stop()
	admin, err := env.Clientset()
	if err != nil {
		return err
	}
	ctlCfg, ns, err := env.ControllerConfig(ctx, f.rbac)
	if err != nil {
		return err
	}
	ctlClient, err := kubernetes.NewForConfig(ctlCfg)
	if err != nil {
		return err
	}
	// The controller takes a job's submission time from its
	// creationTimestamp (the API server's wall clock) and caps it at its own
	// clock: a manual clock behind the wall clock makes every job look just
	// submitted (age 0) in every round. Starting the clock at the wall time
	// keeps ages positive (a job created s wall seconds into the replay
	// looks s seconds older than it is in simulated time).
	epoch := time.Now().UTC().Truncate(time.Second)
	clock := controller.NewManualClock(epoch)
	reg := prometheus.NewRegistry()
	ctl, err := controller.New(ctlClient, controller.Config{Namespace: ns, Clock: clock, Metrics: metrics.New(reg)})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := ctl.Start(rctx); err != nil {
		return err
	}
	p := &kubePolicy{admin: admin, ctl: ctl, clock: clock, epoch: epoch, truth: truth, cluster: cl,
		kube: &testenv.FakeKubelet{Client: admin, Now: clock.Now}, ns: "replay", uids: map[string]types.UID{}, measured: map[string]string{}, invalid: map[string]bool{}}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := p.createNodes(ctx); err != nil {
		return err
	}
	wall := time.Now()
	res, err := sim.Run(ctx, sim.Config{Cluster: cl, Truth: truth, Round: 60, MaxTime: f.maxHours * 3600}, wl, p)
	if err != nil {
		return err
	}
	fmt.Printf("replay: %d controller rounds (%.1f simulated hours) in %s wall time (%.0fx compressed); %d round errors\n",
		p.rounds, res.End/3600, time.Since(wall).Round(time.Second), res.End/time.Since(wall).Seconds(), p.roundErrors)
	printJCTs(os.Stdout, res, simJCT)

	srv := httptest.NewServer(metrics.Handler(reg, nil, nil))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	fmt.Println("\n/metrics after the run (sia_ series):")
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "sia_") || strings.HasPrefix(line, "# HELP sia_") {
			fmt.Println(line)
		}
	}
	return nil
}

// simJob is examples/simulate's result for one job.
type simJob struct {
	JCT      float64
	Restarts int
}

// simulate runs examples/simulate (simcli) with policy sia -variant paper
// on the same jobs and returns each job's JCT.
func simulate(ctx context.Context, f flags, wl *sim.Workload) (map[string]simJob, error) {
	dir, err := os.MkdirTemp("", "sia-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	csvPath := filepath.Join(dir, "workload.csv")
	fh, err := os.Create(csvPath)
	if err != nil {
		return nil, err
	}
	w := csv.NewWriter(fh)
	_ = w.Write([]string{"name", "time", "application", "num_replicas", "batch_size", "category"})
	for _, j := range wl.Jobs {
		_ = w.Write([]string{j.Name, strconv.FormatFloat(j.Submit, 'f', -1, 64), j.App, strconv.Itoa(j.Replicas), strconv.Itoa(j.Batch), j.Category})
	}
	w.Flush()
	if err := errors.Join(w.Error(), fh.Close()); err != nil {
		return nil, err
	}
	jsonPath := filepath.Join(dir, "jobs.json")
	args := []string{"-workload", csvPath, "-data", f.data, "-cluster", f.cluster, "-policy", "sia", "-variant", "paper",
		"-noftf", "-jobs-json", jsonPath}
	fmt.Printf("replay: examples/simulate %s\n", strings.Join(args, " "))
	if err := simcli.Run(ctx, args, io.Discard, io.Discard); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		return nil, err
	}
	var rows []simcli.JobRow
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, err
	}
	out := map[string]simJob{}
	for _, r := range rows {
		out[r.Job] = simJob{JCT: r.JCT, Restarts: r.Restarts}
	}
	return out, nil
}

func printJCTs(w io.Writer, res *sim.Result, ref map[string]simJob) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "job\tapp\tsubmit (h)\tJCT k8s (h)\tJCT simulate (h)\trestarts k8s\trestarts simulate\t")
	var sumK, sumS float64
	n := 0
	for _, j := range res.Jobs {
		s := ref[j.Name]
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t%d\t%d\t\n", j.Name, j.App, j.Submit/3600, hours(j.JCT), hours(s.JCT), j.Restarts, s.Restarts)
		if j.JCT >= 0 && s.JCT >= 0 {
			sumK, sumS, n = sumK+j.JCT, sumS+s.JCT, n+1
		}
	}
	if n > 0 {
		fmt.Fprintf(tw, "mean of %d jobs finished in both\t\t\t%s\t%s\t\t\t\n", n, hours(sumK/float64(n)), hours(sumS/float64(n)))
	}
	tw.Flush()
}

func hours(s float64) string {
	if s < 0 {
		return "unfinished"
	}
	return strconv.FormatFloat(s/3600, 'f', 3, 64)
}

// kubePolicy is a sim.Policy whose decisions are the controller's, taken
// through the API server.
type kubePolicy struct {
	admin    kubernetes.Interface
	ctl      *controller.Controller
	kube     *testenv.FakeKubelet
	clock    *controller.ManualClock
	epoch    time.Time
	truth    sim.Truth
	cluster  sim.Cluster
	ns       string
	uids     map[string]types.UID
	measured map[string]string
	invalid  map[string]bool

	rounds, roundErrors int
}

func (p *kubePolicy) Name() string { return "sia-controller" }

func nodeName(typ string, i int) string { return fmt.Sprintf("%s-%d", typ, i) }

func (p *kubePolicy) createNodes(ctx context.Context) error {
	for _, g := range p.cluster.Groups {
		for i := range g.Nodes {
			name := nodeName(g.Type, i)
			if err := testenv.CreateNode(ctx, p.admin, name, map[string]string{siakube.DefaultTypeLabel: g.Type},
				siakube.DefaultGPUResource, g.GPUsPerNode); err != nil {
				return err
			}
		}
	}
	return nil
}

// Schedule implements sim.Policy: one controller round on the API server.
func (p *kubePolicy) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	p.clock.Set(p.epoch.Add(time.Duration(s.Now * float64(time.Second))))
	active := map[string]bool{}
	for _, j := range s.Jobs {
		active[j.Spec.Name] = true
		if _, ok := p.uids[j.Spec.Name]; !ok {
			if err := p.submit(ctx, j); err != nil {
				return nil, err
			}
		}
		if err := p.report(ctx, j); err != nil {
			return nil, err
		}
	}
	for name := range p.uids {
		if !active[name] {
			if err := p.kube.Finish(ctx, p.ns, name); err != nil {
				return nil, err
			}
			delete(p.uids, name)
		}
	}
	if err := p.kube.Settle(ctx); err != nil {
		return nil, err
	}
	time.Sleep(100 * time.Millisecond) // the controller's informers catch up
	rep, err := p.ctl.RunRound(ctx)
	p.rounds++
	if err != nil || len(rep.JobErrors) > 0 {
		p.roundErrors++
		fmt.Fprintf(os.Stderr, "replay: round at %.0f s: %v %v\n", s.Now, err, rep.JobErrors)
	}
	for id, why := range rep.Invalid {
		if !p.invalid[id] {
			p.invalid[id] = true
			fmt.Fprintf(os.Stderr, "replay: job %s refused by the controller: %s\n", id, why)
		}
	}
	if err := p.kube.Settle(ctx); err != nil {
		return nil, err
	}
	over, err := testenv.Overcommitted(ctx, p.admin, "")
	if err != nil {
		return nil, err
	}
	if len(over) > 0 {
		return nil, fmt.Errorf("round at %.0f s: overcommitted nodes %v", s.Now, over)
	}
	return p.allocations(ctx)
}

// submit creates the job's Job object, suspended, with the annotations a
// user would give it.
func (p *kubePolicy) submit(ctx context.Context, j *sim.Job) error {
	app := j.App
	ann := map[string]string{
		siakube.AnnApplication:  j.Spec.App,
		siakube.AnnInitBatch:    strconv.Itoa(app.InitBatch),
		siakube.AnnMaxBatch:     strconv.Itoa(app.MaxBatch),
		siakube.AnnRestartCost:  (time.Duration(app.RestartCost * float64(time.Second))).String(),
		siakube.AnnRestoreDelay: (time.Duration(app.RestartDelay * float64(time.Second))).String(),
	}
	switch j.Spec.Category {
	case sim.CategoryRigid:
		ann[siakube.AnnKind], ann[siakube.AnnGPUs] = "rigid", strconv.Itoa(j.Spec.Replicas)
		ann[siakube.AnnBatch] = strconv.Itoa(max(j.Spec.Batch, app.InitBatch))
	case sim.CategoryStrongScaled:
		ann[siakube.AnnKind], ann[siakube.AnnMaxGPUs] = "strong-scaling", strconv.Itoa(j.Spec.Replicas)
		ann[siakube.AnnBatch] = strconv.Itoa(max(j.Spec.Batch, app.InitBatch))
	default:
		ann[siakube.AnnKind] = "adaptive"
	}
	var limits []string
	var prof []siakube.ProfilePoint
	for _, t := range p.cluster.Types() {
		if !p.truth.Supports(j.Spec.App, t) {
			continue
		}
		lo, hi := p.truth.LocalRange(j.Spec.App, t)
		limits = append(limits, fmt.Sprintf("%s=%d-%d", t, max(lo, 1), max(hi, lo, 1)))
		for _, o := range p.truth.SeedProfile(j.Spec.App, t) {
			// The user's 1-GPU points within the limits they declare (the
			// measured profiles hold some larger batches, which the
			// controller refuses as inconsistent with the limits).
			if o.Nodes == 1 && o.Replicas == 1 && o.LocalBatch >= max(lo, 1) && o.LocalBatch <= max(hi, lo, 1) {
				prof = append(prof, siakube.ProfilePoint{Type: t, LocalBatch: o.LocalBatch, StepTime: o.StepTime,
					SyncTime: math.Min(o.SyncTime, o.StepTime*(1-1e-9))})
			}
		}
	}
	ann[siakube.AnnLimits] = strings.Join(limits, ",")
	pj, err := json.Marshal(prof)
	if err != nil {
		return err
	}
	ann[siakube.AnnProfile] = string(pj)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: j.Spec.Name, Namespace: p.ns, Annotations: ann,
			Labels: map[string]string{siakube.LabelManaged: siakube.LabelManagedValue}},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true), CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "train", Image: "example.invalid/" + j.Spec.App,
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{siakube.DefaultGPUResource: resource.MustParse("1")},
						Limits:   corev1.ResourceList{siakube.DefaultGPUResource: resource.MustParse("1")}}}}}},
		},
	}
	created, err := p.admin.BatchV1().Jobs(p.ns).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("job %s: %w", j.Spec.Name, err)
	}
	p.uids[j.Spec.Name] = created.UID
	return nil
}

// report patches the job's latest measurement on its current type onto its
// Job, as the job's agent would.
func (p *kubePolicy) report(ctx context.Context, j *sim.Job) error {
	a := j.Alloc()
	if a.GPUs() == 0 {
		return nil
	}
	obs := j.Observations(a.Type)
	if len(obs) == 0 {
		return nil
	}
	o := obs[len(obs)-1]
	m := siakube.Measurement{Job: p.ns + "/" + j.Spec.Name, Type: a.Type, Nodes: o.Nodes, Replicas: o.Replicas, LocalBatch: o.LocalBatch,
		StepTime: o.StepTime, SyncTime: math.Min(o.SyncTime, o.StepTime*(1-1e-9))}
	if g, ok := j.Grad(); ok {
		m.GradSqr, m.GradVar = ptr.To(g.Sqr), ptr.To(g.Var)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if p.measured[j.Spec.Name] == string(raw) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{siakube.AnnMeasurement: string(raw)}}})
	if err != nil {
		return err
	}
	if _, err := p.admin.BatchV1().Jobs(p.ns).Patch(ctx, j.Spec.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("job %s: measurement: %w", j.Spec.Name, err)
	}
	p.measured[j.Spec.Name] = string(raw)
	return nil
}

// allocations returns, per job, the GPUs its running pods hold.
func (p *kubePolicy) allocations(ctx context.Context) (map[string]sim.Alloc, error) {
	pods, err := p.admin.CoreV1().Pods(p.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]sim.Alloc{}
	for _, pod := range pods.Items {
		job := pod.Labels[testenv.JobNameLabel]
		if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil || job == "" {
			continue
		}
		typ, idx, ok := strings.Cut(pod.Spec.NodeName, "-")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil {
			return nil, fmt.Errorf("pod %s on unknown node %q", pod.Name, pod.Spec.NodeName)
		}
		a := out[job]
		if a.Type != "" && a.Type != typ {
			return nil, fmt.Errorf("job %s has pods on two GPU types", job)
		}
		a.Type = typ
		q := pod.Spec.Containers[0].Resources.Requests[siakube.DefaultGPUResource]
		for range q.Value() {
			a.Nodes = append(a.Nodes, i)
		}
		out[job] = a
	}
	for k, a := range out {
		sort.Ints(a.Nodes)
		out[k] = a
	}
	return out, nil
}
