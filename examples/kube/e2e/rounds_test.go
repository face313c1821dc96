package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/examples/kube/siakube"
)

// workload is the e2e job mix: 24 jobs of every kind over two namespaces.
func workload() []jobSpec {
	var out []jobSpec
	for i := range 9 {
		s := jobSpec{name: fmt.Sprintf("adaptive-%d", i), kind: "adaptive", app: apps[i%3], min: 1, max: 16, perGPU: i%3 == 2}
		if i == 4 {
			s.types = []string{"a100", "rtx"}
		}
		out = append(out, s)
	}
	for i := range 7 {
		out = append(out, jobSpec{name: fmt.Sprintf("strong-%d", i), kind: "strong-scaling", app: apps[(i+1)%3], min: 1, max: 8, perGPU: i%2 == 1})
	}
	for i, g := range []int{1, 2, 4, 6, 8, 3, 2, 1} {
		out = append(out, jobSpec{name: fmt.Sprintf("rigid-%d", i), kind: "rigid", app: apps[i%3], gpus: g, nonPre: i < 2, perGPU: g == 3})
	}
	return out
}

// TestRoundsAndFaults runs 36 rounds of the controller on a fleet of three
// GPU types (6-GPU nodes among them) and 24 jobs, checking every round
// (checkRound), with these faults on the way: the controller killed and
// restarted (round 8), a node cordoned and another deleted (round 14), a
// job deleted in the middle of a round (round 18), and concurrent writes
// to the Jobs the controller writes, which answer it 409 Conflict (rounds
// 22-26). Jobs finish as the rounds go (the fake completes one running job
// every 4 rounds from round 6).
func TestRoundsAndFaults(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	c.createNodes(ctx, fleet)
	nsA, nsB := c.namespaceFor(ctx, "team-a"), c.namespaceFor(ctx, "team-b")
	jobs := map[string]*batchv1.Job{}
	for i, s := range workload() {
		ns := nsA
		if i%2 == 1 {
			ns = nsB
		}
		j := c.createJob(ctx, ns, s)
		jobs[ns+"/"+j.Name] = j
	}
	// A Job that did not opt in: the controller must never touch it.
	other, err := c.admin.BatchV1().Jobs(nsA).Create(ctx, indexedJob(nsA, "not-opted-in", false, nil), metav1.CreateOptions{})
	require.NoError(t, err)

	r := c.newReplica(ctx, controller.Config{})
	var (
		finished  []string
		cordoned  string
		deleted   string
		deletedID string
		touched   = map[string]bool{}
		conflicts int64
		// beforeRestart are the records before the restart.
		beforeRestart map[string]*siakube.Record
	)
	running := func() []string {
		var ids []string
		for id, j := range jobs {
			cur, err := c.admin.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
			if err == nil && cur.Annotations[siakube.AnnOutState] == string(siakube.PhaseRunning) {
				ids = append(ids, id)
			}
		}
		sortStrings(ids)
		return ids
	}
	for round := 1; round <= 36; round++ {
		c.clock.Advance(time.Minute)
		c.settle(ctx)

		switch round {
		case 8: // kill and restart the controller
			before := c.records(ctx)
			require.NotEmpty(t, before)
			r.cancel()
			r = c.newReplica(ctx, controller.Config{})
			beforeRestart = before
		case 14: // cordon a node that runs a job; delete another that does
			cordoned, deleted = c.busyNodes(ctx, 2)
			n, err := c.admin.CoreV1().Nodes().Get(ctx, cordoned, metav1.GetOptions{})
			require.NoError(t, err)
			n.Spec.Unschedulable = true
			_, err = c.admin.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			require.NoError(t, err)
			require.NoError(t, c.admin.CoreV1().Nodes().Delete(ctx, deleted, metav1.DeleteOptions{}))
			c.settle(ctx)
		case 18: // delete a job while the round writes the others
			if ids := running(); len(ids) > 0 { // frees GPUs: the round has writes to make
				j := jobs[ids[0]]
				require.NoError(t, c.kube.Finish(ctx, j.Namespace, j.Name))
				finished = append(finished, ids[0])
				delete(jobs, ids[0])
				c.settle(ctx)
			}
			r.rt.setBefore(func(req *http.Request) {
				if res := resourceOf(req.URL.Path); deletedID != "" || res != "jobs" && res != "configmaps" {
					return
				}
				for id, j := range jobs {
					if !strings.HasSuffix(req.URL.Path, "/"+j.Name) && !strings.Contains(req.URL.Path, "/"+j.Name+"/") {
						deletedID = id
						bg := metav1.DeletePropagationBackground
						require.NoError(t, c.admin.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &bg}))
						return
					}
				}
			})
		case 19:
			r.rt.setBefore(nil)
		case 22: // concurrent writers: every Job update of the controller meets a newer version
			before := r.rt.conflicts.Load()
			r.rt.setBefore(func(req *http.Request) {
				if req.Method != http.MethodPut || resourceOf(req.URL.Path) != "jobs" || strings.HasSuffix(req.URL.Path, "/status") {
					return
				}
				parts := strings.Split(req.URL.Path, "/")
				ns, name := parts[len(parts)-3], parts[len(parts)-1]
				if touched[ns+"/"+name] {
					return // one concurrent write per job: the controller's retry must then succeed
				}
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.test/touched":"%d"}}}`, time.Now().UnixNano())
				if _, err := c.admin.BatchV1().Jobs(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err == nil {
					touched[ns+"/"+name] = true
				} else {
					t.Logf("concurrent writer: job %s/%s: %v", ns, name, err)
				}
			})
			t.Cleanup(func() { conflicts = r.rt.conflicts.Load() - before })
		case 27:
			r.rt.setBefore(nil)
			conflicts = r.rt.conflicts.Load()
		}

		if round >= 22 && round <= 26 { // arrivals, so that the round writes Jobs
			s := jobSpec{name: fmt.Sprintf("late-%d", round), kind: "adaptive", app: apps[round%3], min: 1, max: 8}
			j := c.createJob(ctx, nsB, s)
			jobs[nsB+"/"+j.Name] = j
			c.settle(ctx)
		}
		rep, err := r.ctl.RunRound(ctx)
		require.NoError(t, err, "round %d", round)
		require.Empty(t, rep.JobErrors, "round %d", round)
		c.settle(ctx)
		c.checkRound(ctx, round, rep)
		if round == 14 || testing.Verbose() {
			logRound(t, round, rep)
			t.Logf("round %d: cleared %v", round, rep.Cleared)
		}

		switch round {
		case 8:
			checkNothingLost(t, beforeRestart, c.records(ctx), jobs)
		case 14:
			// No job runs on the cordoned or the deleted node: their jobs
			// were cleared and are suspended (a suspended job may still show
			// its last nodes), and no pod of a sia job is left there.
			for id, j := range jobs {
				cur, err := c.admin.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
				require.NoError(t, err)
				for _, bad := range []string{cordoned, deleted} {
					if !suspended(cur) {
						assert.NotContains(t, cur.Annotations[siakube.AnnOutNodes], bad+"=", "round %d: job %s still runs on %s", round, id, bad)
					}
				}
			}
			pods, err := c.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			for _, p := range pods.Items {
				if (p.Spec.NodeName == cordoned || p.Spec.NodeName == deleted) && p.Status.Phase != corev1.PodSucceeded {
					assert.Fail(t, "pod left on a cordoned or deleted node", "round %d: pod %s/%s on %s", round, p.Namespace, p.Name, p.Spec.NodeName)
				}
			}
			require.NotEmpty(t, rep.Cleared, "round 14 cleared the jobs of the two nodes")
		case 18:
			require.NotEmpty(t, deletedID, "round 18 deleted a job (job writes so far %d, %v)", r.rt.count("jobs"), r.rt.writes)
		case 19:
			j := jobs[deletedID]
			_, err := c.admin.CoreV1().ConfigMaps(c.namespace).Get(ctx, controller.RecordPrefix+string(j.UID), metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "the deleted job's record is removed: %v", err)
			delete(jobs, deletedID)
		}
		if round >= 6 && round%4 == 2 {
			if ids := running(); len(ids) > 0 {
				j := jobs[ids[0]]
				require.NoError(t, c.kube.Finish(ctx, j.Namespace, j.Name))
				finished = append(finished, ids[0])
				delete(jobs, ids[0])
			}
		}
	}
	t.Logf("finished %v; cordoned %s, deleted node %s and job %s; %d conflicts answered to the controller; job writes %d",
		finished, cordoned, deleted, deletedID, conflicts, r.rt.count("jobs"))
	assert.NotEmpty(t, finished)
	assert.Positive(t, conflicts, "the concurrent writers caused 409s")
	assert.NotEmpty(t, touched)
	for id := range touched {
		j := jobs[id]
		if j == nil {
			continue
		}
		cur, err := c.admin.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Contains(t, cur.Annotations, "e2e.test/touched", "job %s: the controller's retry kept the other writer's change", id)
	}
	// The Job that did not opt in is untouched.
	cur, err := c.admin.BatchV1().Jobs(nsA).Get(ctx, other.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, other.ResourceVersion, cur.ResourceVersion, "the controller wrote a Job that did not opt in")
	// Finished jobs' records are collected.
	recs := c.records(ctx)
	for _, j := range recs {
		assert.NotContains(t, finished, j.Job, "record of finished job %s kept", j.Job)
	}
}

// busyNodes returns n distinct nodes that run pods of sia jobs.
func (c *cluster) busyNodes(ctx context.Context, n int) (string, string) {
	c.t.Helper()
	pods, err := c.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(c.t, err)
	var nodes []string
	seen := map[string]bool{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && !seen[p.Spec.NodeName] {
			seen[p.Spec.NodeName] = true
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	sortStrings(nodes)
	require.GreaterOrEqual(c.t, len(nodes), n, "busy nodes")
	return nodes[0], nodes[len(nodes)-1]
}

// checkNothingLost: every record before the restart survives (unless its job
// finished or was deleted since) with no fewer restarts, and a job that had
// started is still known to have started.
func checkNothingLost(t *testing.T, before, after map[string]*siakube.Record, live map[string]*batchv1.Job) {
	liveUID := map[string]bool{}
	for _, j := range live {
		liveUID[string(j.UID)] = true
	}
	for uid, b := range before {
		if !liveUID[uid] {
			continue
		}
		a := after[uid]
		if !assert.NotNil(t, a, "record of %s lost across the restart", b.Job) {
			continue
		}
		assert.GreaterOrEqual(t, a.Restarts, b.Restarts, "job %s restarts", b.Job)
		assert.True(t, a.Started || !b.Started, "job %s forgot it started", b.Job)
		assert.GreaterOrEqual(t, a.Peak, b.Peak, "job %s peak", b.Job)
		assert.NotEmpty(t, a.Tracker, "job %s tracker", b.Job)
	}
}

func sortStrings(s []string) { sort.Strings(s) }
