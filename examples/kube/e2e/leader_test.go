package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/examples/kube/siakube"
)

// elected is a replica running under leader election.
type elected struct {
	*replica
	name    string
	mu      sync.Mutex
	leading bool
	err     error
}

func (e *elected) isLeading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading
}

func (c *cluster) startElected(ctx context.Context, name string) *elected {
	c.t.Helper()
	r := c.newReplica(ctx, controller.Config{Debounce: time.Second})
	e := &elected{replica: r, name: name}
	client, err := kubernetes.NewForConfig(c.ctlConfig)
	require.NoError(c.t, err)
	rctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	go func() {
		defer close(r.done)
		err := controller.RunWithLeaderElection(rctx, client, r.ctl, controller.LeaderConfig{
			Identity: name, LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond,
			OnLeading: func(l bool) { e.mu.Lock(); e.leading = l; e.mu.Unlock() },
		})
		e.mu.Lock()
		e.err = err
		e.mu.Unlock()
	}()
	c.t.Cleanup(func() { cancel(); <-r.done })
	return e
}

// nextRound advances the clock until the replica has run a round after
// the current one (its Period timer may be set after an advance).
func (c *cluster) nextRound(ctx context.Context, e *elected) {
	c.t.Helper()
	last := e.ctl.LastRound()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c.clock.Advance(61 * time.Second)
		for range 20 {
			time.Sleep(50 * time.Millisecond)
			if e.ctl.LastRound().After(last) {
				require.NoError(c.t, c.kube.Settle(ctx))
				return
			}
		}
	}
	c.t.Fatalf("replica %s ran no round in 30 s", e.name)
}

// TestSecondReplica runs two replicas under leader election: only the
// leader writes Jobs and records; when it stops, the other takes over from
// the persisted records without starting any job twice.
func TestSecondReplica(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	c.createNodes(ctx, fleet)
	ns := c.namespaceFor(ctx, "team-a")
	for i, s := range workload() {
		if i%2 == 0 {
			c.createJob(ctx, ns, s)
		}
	}
	a := c.startElected(ctx, "replica-a")
	require.Eventually(t, a.isLeading, 20*time.Second, 50*time.Millisecond, "replica-a leads")
	b := c.startElected(ctx, "replica-b")
	time.Sleep(time.Second) // b tries the lease and fails
	require.False(t, b.isLeading(), "two leaders")

	for round := 1; round <= 6; round++ {
		c.nextRound(ctx, a)
		assert.False(t, b.isLeading(), "round %d: two leaders", round)
		c.checkStarts(ctx, round)
		over, err := overcommitted(ctx, c)
		require.NoError(t, err)
		require.Empty(t, over, "round %d", round)
	}
	assert.Positive(t, a.rt.count("jobs"), "the leader writes Jobs")
	assert.Zero(t, b.rt.count("jobs"), "the follower wrote Jobs")
	assert.Zero(t, b.rt.count("configmaps"), "the follower wrote records")
	before := c.records(ctx)
	running := 0
	for _, r := range before {
		if r.Phase == siakube.PhaseRunning || r.Phase == siakube.PhaseRestoring {
			running++
		}
	}
	require.Positive(t, running, "jobs run before the failover")

	// The leader stops (it releases the Lease); b takes over.
	a.cancel()
	<-a.done
	require.Eventually(t, b.isLeading, 20*time.Second, 50*time.Millisecond, "replica-b takes over")
	writesA := a.rt.count("jobs")
	for round := 7; round <= 12; round++ {
		c.nextRound(ctx, b)
		c.checkStarts(ctx, round)
	}
	assert.Equal(t, writesA, a.rt.count("jobs"), "the stopped replica wrote")
	after := c.records(ctx)
	for uid, r := range before {
		if a := after[uid]; assert.NotNil(t, a, "record of %s lost in the failover", r.Job) {
			assert.GreaterOrEqual(t, a.Restarts, r.Restarts, r.Job)
			assert.True(t, a.Started || !r.Started, r.Job)
		}
	}
	jobs, err := c.admin.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, j := range jobs.Items {
		r := after[string(j.UID)]
		if r == nil {
			continue
		}
		assert.LessOrEqual(t, c.kube.Starts(j.UID), 1+r.Restarts, fmt.Sprintf("job %s started twice", r.Job))
	}
}

func overcommitted(ctx context.Context, c *cluster) ([]string, error) {
	over, err := testenvOvercommitted(ctx, c)
	var out []string
	for _, o := range over {
		out = append(out, fmt.Sprintf("%s: %d of %d (%v)", o.Node, o.Used, o.Allocatable, o.Pods))
	}
	return out, err
}
