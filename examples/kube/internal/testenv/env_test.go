package testenv_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sia-sched/sia/examples/kube/internal/testenv"
)

// TestEnv starts the real servers and checks what the e2e tests rely on: the
// version clients parse, RBAC enforced for a certificate user, a
// service-account token bound by an applied YAML file, and no process left
// after Stop.
func TestEnv(t *testing.T) {
	env := testenv.StartT(t, nil)
	ctx := context.Background()

	admin, err := env.Clientset()
	require.NoError(t, err)
	v, err := admin.Discovery().ServerVersion()
	require.NoError(t, err)
	assert.Equal(t, "1", v.Major)
	assert.NotEmpty(t, v.GitVersion)

	// A user with no bindings is refused.
	cfg, err := env.UserConfig("nobody")
	require.NoError(t, err)
	nobody, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = nobody.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)

	// A role granted by YAML applies to the ServiceAccount's token.
	yaml := `apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: tenv}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-reader}
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: node-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader}
subjects:
- {kind: ServiceAccount, name: reader, namespace: tenv}
`
	path := filepath.Join(t.TempDir(), "rbac.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	saCfg, ns, err := env.ControllerConfig(ctx, path)
	require.NoError(t, err)
	assert.Equal(t, "tenv", ns)
	sa, err := kubernetes.NewForConfig(saCfg)
	require.NoError(t, err)
	_, err = sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	assert.NoError(t, err)
	_, err = sa.CoreV1().Secrets("tenv").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)
	// Applying again updates instead of failing.
	applied, err := env.ApplyFile(ctx, path)
	require.NoError(t, err)
	assert.Len(t, applied.Objects, 3)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: "tenv"}}, applied.ServiceAccounts)

	// Pods can be created without a "default" ServiceAccount (no controller
	// manager runs): the ServiceAccount admission plugin is off.
	_, err = admin.CoreV1().Pods("tenv").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	env.Stop()
	_, err = os.Stat(env.Dir)
	assert.True(t, os.IsNotExist(err), "temp dir removed")
}

// TestFindMissing checks the message when the binaries are absent.
func TestFindMissing(t *testing.T) {
	t.Setenv("SIA_K8S_BIN", t.TempDir())
	t.Setenv("KUBEBUILDER_ASSETS", "")
	_, err := testenv.Find()
	require.ErrorIs(t, err, testenv.ErrNoBinaries)
	assert.Contains(t, err.Error(), "no executable etcd")
	t.Setenv("SIA_K8S_BIN", "")
	_, err = testenv.Find()
	require.ErrorIs(t, err, testenv.ErrNoBinaries)
}
