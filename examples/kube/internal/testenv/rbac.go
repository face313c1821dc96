package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Applied lists what ApplyFile created.
type Applied struct {
	// Objects are the created objects, in file order.
	Objects []*unstructured.Unstructured
	// ServiceAccounts are the ServiceAccount subjects of the file's
	// (Cluster)RoleBindings, as namespace/name pairs.
	ServiceAccounts []rbacv1.Subject
}

// ApplyFile creates every object of a multi-document YAML file (for example
// examples/kube/deploy/rbac.yaml) as the admin, with the real API server
// validating it: a Namespace an object names is created first if missing.
// Objects that already exist are updated.
func (e *Env) ApplyFile(ctx context.Context, path string) (*Applied, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.Admin)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(e.Admin)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	cs, err := e.Clientset()
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	out := &Applied{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for doc := 1; ; doc++ {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("testenv: %s: document %d: %w", path, doc, err)
		}
		if len(obj.Object) == 0 {
			continue // an empty document
		}
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("testenv: %s: document %d (%s %s): %w", path, doc, gvk.Kind, obj.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = corev1.NamespaceDefault
				obj.SetNamespace(ns)
			}
			if err := ensureNamespace(ctx, cs, ns); err != nil {
				return nil, err
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		created, err := ri.Create(ctx, &obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cur, gerr := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if gerr != nil {
				return nil, fmt.Errorf("testenv: %s: document %d: %w", path, doc, gerr)
			}
			obj.SetResourceVersion(cur.GetResourceVersion())
			created, err = ri.Update(ctx, &obj, metav1.UpdateOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("testenv: %s: document %d (%s %s): %w", path, doc, gvk.Kind, obj.GetName(), err)
		}
		out.Objects = append(out.Objects, created)
		if gvk.Group == rbacv1.GroupName && (gvk.Kind == "RoleBinding" || gvk.Kind == "ClusterRoleBinding") {
			subjects, _, _ := unstructured.NestedSlice(created.Object, "subjects")
			for _, s := range subjects {
				sm, _ := s.(map[string]any)
				if sm["kind"] != rbacv1.ServiceAccountKind {
					continue
				}
				name, _ := sm["name"].(string)
				ns, _ := sm["namespace"].(string)
				if ns == "" {
					ns = created.GetNamespace()
				}
				sub := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}
				if !containsSubject(out.ServiceAccounts, sub) {
					out.ServiceAccounts = append(out.ServiceAccounts, sub)
				}
			}
		}
	}
	return out, nil
}

func containsSubject(ss []rbacv1.Subject, s rbacv1.Subject) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testenv: namespace %s: %w", ns, err)
	}
	return nil
}

// ServiceAccountConfig returns a rest.Config that authenticates as the
// ServiceAccount namespace/name with a bound token from the TokenRequest API
// (signed by the server's service-account key), creating the ServiceAccount
// if it does not exist. Its rights are exactly what RBAC binds to it.
func (e *Env) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	cs, err := e.Clientset()
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	if err := ensureNamespace(ctx, cs, namespace); err != nil {
		return nil, err
	}
	_, err = cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("testenv: service account %s/%s: %w", namespace, name, err)
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("testenv: token for %s/%s: %w", namespace, name, err)
	}
	return &rest.Config{
		Host:            e.Host,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.ca.certPEM},
		QPS:             200, Burst: 400,
	}, nil
}

// ControllerConfig applies the RBAC file at path and returns a rest.Config
// of its only ServiceAccount subject (the controller's identity), with the
// ServiceAccount's namespace. It fails when the file binds no
// ServiceAccount or more than one.
func (e *Env) ControllerConfig(ctx context.Context, path string) (*rest.Config, string, error) {
	applied, err := e.ApplyFile(ctx, path)
	if err != nil {
		return nil, "", err
	}
	if len(applied.ServiceAccounts) != 1 {
		return nil, "", fmt.Errorf("testenv: %s binds %d ServiceAccounts (%v), want exactly one: the controller's", path, len(applied.ServiceAccounts), applied.ServiceAccounts)
	}
	sa := applied.ServiceAccounts[0]
	cfg, err := e.ServiceAccountConfig(ctx, sa.Namespace, sa.Name)
	return cfg, sa.Namespace, err
}
