// Package e2e runs the controller against a real etcd and kube-apiserver
// (internal/testenv), under the ServiceAccount and role of
// examples/kube/deploy/rbac.yaml, with the fake kubelet of testenv in the
// place of the Job controller, scheduler and kubelet.
//
// The tests skip without the binaries (see hack/build-test-binaries.sh),
// except with CI=true, where they fail.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/examples/kube/internal/testenv"
	"github.com/sia-sched/sia/examples/kube/siakube"
)

// rbacPath is the controller's shipped role; policyPath the admission
// policy that confines its Job writes to the opted-in Jobs.
var (
	rbacPath   = filepath.Join("..", "deploy", "rbac.yaml")
	policyPath = filepath.Join("..", "deploy", "admission-policy.yaml")
)

// start is the clock's start: fixed, so that runs are reproducible.
var start = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// cluster is one test's API server, fake kubelet and controller identity.
type cluster struct {
	t     *testing.T
	env   *testenv.Env
	admin *kubernetes.Clientset
	kube  *testenv.FakeKubelet
	clock *controller.ManualClock
	// ctlConfig authenticates as the controller's ServiceAccount;
	// namespace is its namespace.
	ctlConfig *rest.Config
	namespace string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	env := testenv.StartT(t, nil)
	ctx := context.Background()
	admin, err := env.Clientset()
	require.NoError(t, err)
	cfg, ns, err := env.ControllerConfig(ctx, rbacPath)
	require.NoError(t, err, "apply %s", rbacPath)
	_, err = env.ApplyFile(ctx, policyPath)
	require.NoError(t, err, "apply %s", policyPath)
	waitPolicy(t, admin, cfg)
	clock := controller.NewManualClock(start)
	return &cluster{t: t, env: env, admin: admin, clock: clock, ctlConfig: cfg, namespace: ns,
		kube: &testenv.FakeKubelet{Client: admin, Now: clock.Now}}
}

// nodeSpec is a group of identical GPU nodes.
type nodeSpec struct {
	prefix, typ string
	count, gpus int
}

// fleet is the e2e fleet: three GPU types, 6-GPU nodes among them, 58 GPUs.
var fleet = []nodeSpec{
	{"a100", "a100", 2, 8},
	{"rtx", "rtx", 3, 6},
	{"t4", "t4", 6, 4},
}

func (c *cluster) createNodes(ctx context.Context, specs []nodeSpec) {
	c.t.Helper()
	for _, s := range specs {
		for i := range s.count {
			c.createNode(ctx, fmt.Sprintf("%s-%d", s.prefix, i), s.typ, s.gpus)
		}
	}
}

func (c *cluster) createNode(ctx context.Context, name, typ string, gpus int) {
	c.t.Helper()
	require.NoError(c.t, testenv.CreateNode(ctx, c.admin, name,
		map[string]string{siakube.DefaultTypeLabel: typ, "kubernetes.io/hostname": name}, siakube.DefaultGPUResource, gpus))
}

// app is a model's 1-GPU profile on each type (step time at localBatch).
type app struct {
	name                string
	initBatch, maxBatch int
	localMin, localMax  map[string]int
	step                map[string]float64
}

var apps = []app{
	{"cifar10", 128, 4096, map[string]int{"a100": 32, "rtx": 32, "t4": 32}, map[string]int{"a100": 1024, "rtx": 512, "t4": 512},
		map[string]float64{"a100": 0.03, "rtx": 0.05, "t4": 0.09}},
	{"imagenet", 200, 12800, map[string]int{"a100": 20, "rtx": 20, "t4": 20}, map[string]int{"a100": 400, "rtx": 200, "t4": 100},
		map[string]float64{"a100": 0.20, "rtx": 0.35, "t4": 0.80}},
	{"bert", 12, 384, map[string]int{"a100": 4, "rtx": 4, "t4": 4}, map[string]int{"a100": 48, "rtx": 12, "t4": 12},
		map[string]float64{"a100": 0.15, "rtx": 0.40, "t4": 0.70}},
}

// jobSpec describes one test Job.
type jobSpec struct {
	name, kind string
	app        app
	min, max   int // adaptive and strong-scaling
	gpus       int // rigid
	nonPre     bool
	perGPU     bool // one pod per GPU
	// types limits the job to these GPU types (nil: all of the app's).
	types []string
}

func (s jobSpec) annotations() map[string]string {
	a := s.app
	types := s.types
	if types == nil {
		for t := range a.step {
			types = append(types, t)
		}
		sort.Strings(types)
	}
	var limits []string
	var prof []siakube.ProfilePoint
	for _, t := range types {
		limits = append(limits, fmt.Sprintf("%s=%d-%d", t, a.localMin[t], a.localMax[t]))
		lb := min(a.initBatch, a.localMax[t])
		prof = append(prof, siakube.ProfilePoint{Type: t, LocalBatch: lb, StepTime: a.step[t] * float64(lb) / float64(a.initBatch)})
	}
	pj, _ := json.Marshal(prof)
	ann := map[string]string{
		siakube.AnnKind:        s.kind,
		siakube.AnnApplication: a.name,
		siakube.AnnInitBatch:   strconv.Itoa(a.initBatch),
		siakube.AnnMaxBatch:    strconv.Itoa(a.maxBatch),
		siakube.AnnLimits:      strings.Join(limits, ","),
		siakube.AnnProfile:     string(pj),
		siakube.AnnRestartCost: "60s",
	}
	if s.kind == "rigid" {
		ann[siakube.AnnGPUs] = strconv.Itoa(s.gpus)
		delete(ann, siakube.AnnMaxBatch)
	} else {
		if s.min > 0 {
			ann[siakube.AnnMinGPUs] = strconv.Itoa(s.min)
		}
		if s.max > 0 {
			ann[siakube.AnnMaxGPUs] = strconv.Itoa(s.max)
		}
	}
	if s.kind == "strong-scaling" {
		delete(ann, siakube.AnnMaxBatch)
	}
	if s.nonPre {
		ann[siakube.AnnNonPreemptible] = "true"
	}
	if s.perGPU {
		ann[siakube.AnnPodGPUs] = "1"
	}
	return ann
}

// indexedJob returns a suspended Indexed Job of one pod; managed opts it in.
func indexedJob(ns, name string, managed bool, ann map[string]string) *batchv1.Job {
	labels := map[string]string{}
	if managed {
		labels[siakube.LabelManaged] = siakube.LabelManagedValue
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: ann},
		Spec: batchv1.JobSpec{
			Suspend:        ptr.To(true),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Parallelism:    ptr.To[int32](1),
			Completions:    ptr.To[int32](1),
			BackoffLimit:   ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Tolerations:   []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name: "train", Image: "example.invalid/train:1",
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{siakube.DefaultGPUResource: resource.MustParse("1")},
							Limits:   corev1.ResourceList{siakube.DefaultGPUResource: resource.MustParse("1")},
						},
					}},
				},
			},
		},
	}
}

func (c *cluster) createJob(ctx context.Context, ns string, s jobSpec) *batchv1.Job {
	c.t.Helper()
	j, err := c.admin.BatchV1().Jobs(ns).Create(ctx, indexedJob(ns, s.name, true, s.annotations()), metav1.CreateOptions{})
	require.NoError(c.t, err, "create job %s", s.name)
	return j
}

func (c *cluster) namespaceFor(ctx context.Context, name string) string {
	c.t.Helper()
	_, err := c.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(c.t, err)
	return name
}

// counter is an http.RoundTripper that counts the controller's requests and
// can run a hook before a request is sent (to inject a concurrent write).
type counter struct {
	next http.RoundTripper
	mu   sync.Mutex
	// writes counts mutating requests by resource ("jobs", "configmaps",
	// "leases", "events", "pods"); conflicts the 409 answers.
	writes    map[string]int
	conflicts atomic.Int64
	before    func(*http.Request)
}

func (rt *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		res := resourceOf(req.URL.Path)
		rt.mu.Lock()
		if rt.writes == nil {
			rt.writes = map[string]int{}
		}
		rt.writes[res]++
		hook := rt.before
		rt.mu.Unlock()
		if hook != nil {
			hook(req)
		}
	}
	resp, err := rt.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusConflict {
		rt.conflicts.Add(1)
	}
	return resp, err
}

func (rt *counter) count(res string) int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.writes[res]
}

func (rt *counter) setBefore(f func(*http.Request)) {
	rt.mu.Lock()
	rt.before = f
	rt.mu.Unlock()
}

// resourceOf returns the resource of an API path: /apis/batch/v1/namespaces/x/jobs/y/status -> jobs.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			return parts[i+2]
		}
	}
	if len(parts) >= 3 {
		if parts[0] == "api" {
			return parts[2]
		}
		if len(parts) >= 4 {
			return parts[3]
		}
	}
	return path
}

// replica is one controller process.
type replica struct {
	ctl    *controller.Controller
	rt     *counter
	cancel context.CancelFunc
	done   chan struct{}
}

// newReplica builds a controller under the controller's ServiceAccount and
// starts its informers.
func (c *cluster) newReplica(ctx context.Context, cfg controller.Config) *replica {
	c.t.Helper()
	rc := rest.CopyConfig(c.ctlConfig)
	r := &replica{rt: &counter{}, done: make(chan struct{})}
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper { r.rt.next = next; return r.rt }
	client, err := kubernetes.NewForConfig(rc)
	require.NoError(c.t, err)
	cfg.Namespace = c.namespace
	if cfg.Clock == nil {
		cfg.Clock = c.clock
	}
	r.ctl, err = controller.New(client, cfg)
	require.NoError(c.t, err)
	rctx, cancel := context.WithCancel(ctx)
	r.cancel = func() { cancel() }
	require.NoError(c.t, r.ctl.Start(rctx))
	c.t.Cleanup(cancel)
	return r
}

// settle lets the fake kubelet converge and gives the controller's informers
// time to see the result.
func (c *cluster) settle(ctx context.Context) {
	c.t.Helper()
	require.NoError(c.t, c.kube.Settle(ctx))
	time.Sleep(150 * time.Millisecond)
}

// waitPolicy waits until the admission policy is in force (the API server
// loads policies asynchronously): a dry-run update of a Job that did not opt
// in, as the controller, is refused.
func waitPolicy(t *testing.T, admin kubernetes.Interface, ctlConfig *rest.Config) {
	t.Helper()
	ctx := context.Background()
	probe, err := admin.BatchV1().Jobs("default").Create(ctx, indexedJob("default", "policy-probe", false, nil), metav1.CreateOptions{})
	require.NoError(t, err)
	sa, err := kubernetes.NewForConfig(ctlConfig)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, err := sa.BatchV1().Jobs("default").Get(ctx, probe.Name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		j.Annotations = map[string]string{"probe": "1"}
		_, err = sa.BatchV1().Jobs("default").Update(ctx, j, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err)
	}, 30*time.Second, 100*time.Millisecond, "admission policy %s in force", policyPath)
	bg := metav1.DeletePropagationBackground
	require.NoError(t, admin.BatchV1().Jobs("default").Delete(ctx, probe.Name, metav1.DeleteOptions{PropagationPolicy: &bg}))
}
