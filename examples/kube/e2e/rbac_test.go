package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/sia-sched/sia/examples/kube/siakube"
)

// TestLeastPrivilege checks, as the controller's ServiceAccount bound by
// deploy/rbac.yaml, that the real API server refuses what the controller
// need not do, and allows what it does.
func TestLeastPrivilege(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	c.createNodes(ctx, []nodeSpec{{"t4", "t4", 1, 4}})
	ns := c.namespaceFor(ctx, "team-a")
	opted := c.createJob(ctx, ns, jobSpec{name: "opted-in", kind: "rigid", app: apps[0], gpus: 1})
	plain, err := c.admin.BatchV1().Jobs(ns).Create(ctx, indexedJob(ns, "plain", false, nil), metav1.CreateOptions{})
	require.NoError(t, err)
	sa, err := kubernetes.NewForConfig(c.ctlConfig)
	require.NoError(t, err)

	forbidden := func(what string, err error) {
		t.Helper()
		assert.True(t, apierrors.IsForbidden(err), "%s: want Forbidden from the API server, got %v", what, err)
	}
	// Secrets: neither in the controller's namespace nor elsewhere.
	_, err = sa.CoreV1().Secrets(c.namespace).List(ctx, metav1.ListOptions{})
	forbidden("list secrets in the controller's namespace", err)
	_, err = sa.CoreV1().Secrets(ns).Get(ctx, "any", metav1.GetOptions{})
	forbidden("get a secret", err)
	// Nodes: read only.
	_, err = sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	assert.NoError(t, err, "list nodes")
	forbidden("delete a node", sa.CoreV1().Nodes().Delete(ctx, "t4-0", metav1.DeleteOptions{}))
	_, err = sa.CoreV1().Nodes().Patch(ctx, "t4-0", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{})
	forbidden("cordon a node", err)
	// Jobs: no create or delete; no write to a Job that did not opt in.
	_, err = sa.BatchV1().Jobs(ns).Create(ctx, indexedJob(ns, "new", true, nil), metav1.CreateOptions{})
	forbidden("create a job", err)
	forbidden("delete a job", sa.BatchV1().Jobs(ns).Delete(ctx, opted.Name, metav1.DeleteOptions{}))
	cur, err := sa.BatchV1().Jobs(ns).Get(ctx, plain.Name, metav1.GetOptions{})
	if err == nil {
		cur.Spec.Suspend = ptr.To(false)
		_, err = sa.BatchV1().Jobs(ns).Update(ctx, cur, metav1.UpdateOptions{})
	}
	forbidden("unsuspend a job that did not opt in", err)
	_, err = sa.BatchV1().Jobs(ns).Patch(ctx, plain.Name, types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{})
	forbidden("patch a job that did not opt in", err)
	_, err = sa.BatchV1().Jobs(ns).Patch(ctx, plain.Name, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"`+siakube.LabelManaged+`":"true"}}}`), metav1.PatchOptions{})
	forbidden("opt a job in on the user's behalf", err)
	// ConfigMaps and Leases: only in its own namespace.
	_, err = sa.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	forbidden("list configmaps of a user namespace", err)
	_, err = sa.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
	forbidden("list leases of a user namespace", err)
	// Pods: never deleted or created by the controller.
	forbidden("delete pods", sa.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))

	// What it needs works: a round under this role writes the opted-in Job.
	r := c.newReplica(ctx, ctlConfigDefaults())
	c.settle(ctx)
	rep, err := r.ctl.RunRound(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.JobErrors)
	c.settle(ctx)
	c.checkRound(ctx, 1, rep)
	j, err := c.admin.BatchV1().Jobs(ns).Get(ctx, opted.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotEmpty(t, j.Annotations[siakube.AnnOutState], "the round wrote the opted-in job")
	p, err := c.admin.BatchV1().Jobs(ns).Get(ctx, plain.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, plain.ResourceVersion, p.ResourceVersion, "the job that did not opt in is untouched")
}
