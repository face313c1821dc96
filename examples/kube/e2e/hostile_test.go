package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/examples/kube/siakube"
)

func ctlConfigDefaults() controller.Config { return controller.Config{} }

// TestHostileAnnotations gives jobs malformed and hostile annotations: each
// such job gets a condition naming the annotation, and the other jobs are
// still planned and started.
func TestHostileAnnotations(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	c.createNodes(ctx, []nodeSpec{{"a100", "a100", 1, 8}, {"rtx", "rtx", 1, 6}, {"t4", "t4", 2, 4}})
	ns := c.namespaceFor(ctx, "team-a")
	good := []jobSpec{
		{name: "good-0", kind: "adaptive", app: apps[0], min: 1, max: 8},
		{name: "good-1", kind: "strong-scaling", app: apps[1], min: 1, max: 4},
		{name: "good-2", kind: "rigid", app: apps[2], gpus: 2},
		{name: "spy", kind: "rigid", app: apps[0], gpus: 1},
	}
	for _, s := range good {
		c.createJob(ctx, ns, s)
	}
	base := jobSpec{kind: "adaptive", app: apps[0], min: 1, max: 4}
	hostile := map[string]struct {
		key, value string
	}{
		"huge-max":      {siakube.AnnMaxGPUs, "99999999999999999999999"},
		"huge-rigid":    {siakube.AnnGPUs, "1e308"},
		"nan-batch":     {siakube.AnnInitBatch, "NaN"},
		"neg-min":       {siakube.AnnMinGPUs, "-5"},
		"inf-restart":   {siakube.AnnRestartCost, "9999999999h"},
		"nan-profile":   {siakube.AnnProfile, `[{"type":"a100","localBatch":64,"stepTime":NaN,"syncTime":0}]`},
		"inf-profile":   {siakube.AnnProfile, `[{"type":"a100","localBatch":64,"stepTime":1e999,"syncTime":0}]`},
		"big-app":       {siakube.AnnApplication, strings.Repeat("x", 200<<10)},
		"bad-limits":    {siakube.AnnLimits, "a100=64-1,a100=1-2"},
		"kind-injected": {siakube.AnnKind, "rigid\"; DROP TABLE"},
	}
	for name, h := range hostile {
		s := base
		s.name = name
		if name == "huge-rigid" {
			s.kind = "rigid"
		}
		ann := s.annotations()
		ann[h.key] = h.value
		_, err := c.admin.BatchV1().Jobs(ns).Create(ctx, indexedJob(ns, name, true, ann), metav1.CreateOptions{})
		require.NoError(t, err, name)
	}
	// The controller's own output annotations, set by the user, are ignored:
	// the job is planned from scratch, not taken as running.
	forged := base
	forged.name = "forged-state"
	ann := forged.annotations()
	ann[siakube.AnnOutState] = "running"
	ann[siakube.AnnOutNodes] = "a100-0=8"
	ann[siakube.AnnOutGPUType] = "a100"
	_, err := c.admin.BatchV1().Jobs(ns).Create(ctx, indexedJob(ns, forged.name, true, ann), metav1.CreateOptions{})
	require.NoError(t, err)
	// A 1 MB annotation never reaches the controller: the API server refuses
	// the object (annotations are limited to 256 KiB in total).
	big := base.annotations()
	big[siakube.AnnApplication] = strings.Repeat("y", 1<<20)
	_, err = c.admin.BatchV1().Jobs(ns).Create(ctx, indexedJob(ns, "one-mb", true, big), metav1.CreateOptions{})
	assert.True(t, apierrors.IsInvalid(err), "a 1 MB annotation: want Invalid from the API server, got %v", err)

	r := c.newReplica(ctx, ctlConfigDefaults())
	var last *controller.Report
	for round := 1; round <= 4; round++ {
		c.clock.Advance(time.Minute)
		c.settle(ctx)
		rep, err := r.ctl.RunRound(ctx)
		require.NoError(t, err, "round %d", round)
		c.settle(ctx)
		c.checkRound(ctx, round, rep)
		last = rep
		logRound(t, round, rep)
	}
	for name, h := range hostile {
		id := ns + "/" + name
		assert.Contains(t, last.Invalid, id, "job %s", name)
		j, err := c.admin.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		cd := condition(j)
		if assert.NotNil(t, cd, name) {
			assert.Equal(t, "InvalidAnnotations", cd.Reason, name)
			assert.Contains(t, cd.Message, h.key, "job %s: the condition names the annotation", name)
			assert.LessOrEqual(t, len(cd.Message), 2048, "job %s: condition message bounded", name)
		}
		assert.True(t, suspended(j), name)
	}
	planned := map[string]bool{}
	for _, d := range last.Plan.Decisions {
		planned[d.Job] = true
	}
	for _, s := range append(good, forged) {
		assert.True(t, planned[ns+"/"+s.name], "job %s planned despite the hostile jobs", s.name)
	}
	assert.Positive(t, last.GPUs["a100"]+last.GPUs["rtx"]+last.GPUs["t4"], "the good jobs got GPUs")

	// A measurement naming another job is refused with an event; the job
	// keeps running and the round goes on.
	spy, err := c.admin.BatchV1().Jobs(ns).Get(ctx, "spy", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, string(siakube.PhaseRunning), spy.Annotations[siakube.AnnOutState], "spy runs")
	m := fmt.Sprintf(`{"job":"%s/good-0","type":%q,"nodes":1,"replicas":1,"localBatch":128,"stepTime":0.1,"syncTime":0}`,
		ns, spy.Annotations[siakube.AnnOutGPUType])
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, siakube.AnnMeasurement, m)
	_, err = c.admin.BatchV1().Jobs(ns).Patch(ctx, "spy", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
	c.clock.Advance(time.Minute)
	c.settle(ctx)
	rep, err := r.ctl.RunRound(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.JobErrors)
	assert.Eventually(t, func() bool {
		evs, err := c.admin.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=spy"})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Reason == "SiaMeasurementRefused" && strings.Contains(e.Message, "good-0") {
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond, "a Warning event refuses the foreign measurement")
}
