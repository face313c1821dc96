// Package testenv runs a real etcd and kube-apiserver for the end-to-end
// tests of examples/kube: the binaries that hack/build-test-binaries.sh
// builds from the Go module proxy, found through SIA_K8S_BIN (or
// KUBEBUILDER_ASSETS, as controller-runtime's envtest names it).
//
// The API server runs with RBAC authorization, client-certificate
// authentication (a CA generated per run), service-account tokens signed by
// a key pair generated per run, and no controllers: there is no
// kube-controller-manager, kube-scheduler or kubelet. The tests play those
// parts themselves (see package e2e's fake kubelet).
//
// Without the binaries, Start skips the test with a message saying how to
// build them; with CI=true their absence fails the test instead.
package testenv

import (
	"bytes"
	"context"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ErrNoBinaries is returned by Find when neither SIA_K8S_BIN nor
// KUBEBUILDER_ASSETS names a directory holding etcd and kube-apiserver.
var ErrNoBinaries = errors.New("testenv: no etcd/kube-apiserver binaries (set SIA_K8S_BIN to the directory that examples/kube/hack/build-test-binaries.sh prints)")

// Find returns the directory holding the etcd and kube-apiserver binaries.
func Find() (string, error) {
	for _, env := range []string{"SIA_K8S_BIN", "KUBEBUILDER_ASSETS"} {
		dir := os.Getenv(env)
		if dir == "" {
			continue
		}
		for _, b := range []string{"etcd", "kube-apiserver"} {
			if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				return "", fmt.Errorf("%w: %s=%s has no executable %s", ErrNoBinaries, env, dir, b)
			}
		}
		return dir, nil
	}
	return "", ErrNoBinaries
}

// RequireBinaries returns the binaries' directory, or skips the test when
// they are missing; when CI=true it fails the test instead, so that CI never
// passes without running the end-to-end tests.
func RequireBinaries(t testing.TB) string {
	t.Helper()
	dir, err := Find()
	if err == nil {
		return dir
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %v", err)
	}
	t.Skipf("skipping the real-API-server test: %v", err)
	return ""
}

// Options tune an Env; the zero value (or nil) is the default.
type Options struct {
	// BinDir holds etcd and kube-apiserver; empty means Find().
	BinDir string
	// ExtraAPIServerFlags are appended to the API server's command line.
	ExtraAPIServerFlags []string
	// StartTimeout bounds the wait for etcd and /readyz; zero means 90 s.
	StartTimeout time.Duration
}

// Env is a running etcd and kube-apiserver.
type Env struct {
	// Admin is a rest.Config of a cluster admin (group system:masters).
	Admin *rest.Config
	// Dir is the temp directory holding data, certificates and logs.
	Dir string
	// Host is the API server's https URL.
	Host string

	ca      *authority
	mu      sync.Mutex
	procs   []*process
	stopped bool
}

// Start runs etcd and kube-apiserver in a temp directory and waits until the
// server's /readyz answers ok. The caller must call Stop (StartT does).
func Start(ctx context.Context, opts *Options) (env *Env, err error) {
	if opts == nil {
		opts = &Options{}
	}
	bin := opts.BinDir
	if bin == "" {
		if bin, err = Find(); err != nil {
			return nil, err
		}
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "sia-testenv-")
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	env = &Env{Dir: dir}
	defer func() {
		if err != nil {
			env.Stop()
		}
	}()
	if env.ca, err = newAuthority(); err != nil {
		return nil, fmt.Errorf("testenv: CA: %w", err)
	}
	etcdURL, err := env.startEtcd(ctx, bin)
	if err != nil {
		return nil, err
	}
	if err := env.startAPIServer(ctx, bin, etcdURL, opts.ExtraAPIServerFlags); err != nil {
		return nil, err
	}
	return env, nil
}

// StartT is Start for a test: it skips or fails (see RequireBinaries) when
// the binaries are missing, fails on any start error, and stops the
// processes and removes the temp directory when the test ends.
func StartT(t testing.TB, opts *Options) *Env {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.BinDir == "" {
		o.BinDir = RequireBinaries(t)
	}
	env, err := Start(context.Background(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("testenv: last lines of the API server log:\n%s", env.LogTail("kube-apiserver", 40))
		}
		env.Stop()
	})
	return env
}

// Stop kills the processes (their whole process groups) and removes the
// temp directory. It is safe to call more than once.
func (e *Env) Stop() {
	e.mu.Lock()
	procs := e.procs
	already := e.stopped
	e.stopped = true
	e.mu.Unlock()
	if already {
		return
	}
	for i := len(procs) - 1; i >= 0; i-- { // API server first, then etcd
		procs[i].stop()
	}
	if os.Getenv("SIA_TESTENV_KEEP") == "" {
		_ = os.RemoveAll(e.Dir)
	}
}

// Clientset is a typed client of the admin.
func (e *Env) Clientset() (*kubernetes.Clientset, error) {
	return kubernetes.NewForConfig(e.Admin)
}

// UserConfig returns a rest.Config that authenticates as user (with groups)
// by a client certificate signed by the env's CA. It has no rights until
// RBAC grants them.
func (e *Env) UserConfig(user string, groups ...string) (*rest.Config, error) {
	e.mu.Lock()
	certPEM, keyPEM, err := e.ca.issue(pkix.Name{CommonName: user, Organization: groups}, nil, nil)
	e.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("testenv: client certificate for %q: %w", user, err)
	}
	return &rest.Config{
		Host: e.Host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: e.ca.certPEM, CertData: certPEM, KeyData: keyPEM,
		},
		QPS: 200, Burst: 400,
	}, nil
}

// LogTail returns the last n lines of a process's log ("etcd" or
// "kube-apiserver").
func (e *Env) LogTail(name string, n int) string {
	data, err := os.ReadFile(filepath.Join(e.Dir, name+".log"))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (e *Env) startEtcd(ctx context.Context, bin string) (string, error) {
	ports, err := freePorts(2)
	if err != nil {
		return "", err
	}
	client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	args := []string{
		"--name=testenv",
		"--data-dir=" + filepath.Join(e.Dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=testenv=" + peer,
		"--unsafe-no-fsync=true", // a test cluster: speed over durability
		"--log-level=warn",
	}
	if err := e.run(bin, "etcd", args); err != nil {
		return "", err
	}
	if err := waitFor(ctx, http.DefaultClient, client+"/health", e, "etcd"); err != nil {
		return "", err
	}
	return client, nil
}

func (e *Env) startAPIServer(ctx context.Context, bin, etcdURL string, extra []string) error {
	certDir := filepath.Join(e.Dir, "pki")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	servingCert, servingKey, err := e.ca.issue(pkix.Name{CommonName: "kube-apiserver"},
		[]net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost", "kubernetes.default.svc"})
	if err != nil {
		return fmt.Errorf("testenv: serving certificate: %w", err)
	}
	caFile, err := writeFile(certDir, "ca.crt", e.ca.certPEM)
	if err != nil {
		return err
	}
	certFile, err := writeFile(certDir, "apiserver.crt", servingCert)
	if err != nil {
		return err
	}
	keyFile, err := writeFile(certDir, "apiserver.key", servingKey)
	if err != nil {
		return err
	}
	saPub, saKey, err := writeServiceAccountKeys(certDir)
	if err != nil {
		return fmt.Errorf("testenv: service-account keys: %w", err)
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	e.Host = "https://127.0.0.1:" + strconv.Itoa(ports[0])
	args := append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none", // no Endpoints for 127.0.0.1
		"--cert-dir=" + certDir,
		"--tls-cert-file=" + certFile,
		"--tls-private-key-file=" + keyFile,
		"--client-ca-file=" + caFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + saPub,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		// No kube-controller-manager creates namespaces' "default"
		// ServiceAccount, so the admission plugin that requires it is off.
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		"--v=1",
	}, extra...)
	if err := e.run(bin, "kube-apiserver", args); err != nil {
		return err
	}
	admin, err := e.UserConfig("testenv-admin", "system:masters")
	if err != nil {
		return err
	}
	e.Admin = admin
	hc, err := rest.HTTPClientFor(admin)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	return waitFor(ctx, hc, e.Host+"/readyz", e, "kube-apiserver")
}

// run starts bin/name with args in its own process group, logging to
// Dir/name.log. The child gets SIGKILL if the test process dies, so a
// crashed test leaves no orphans.
func (e *Env) run(bin, name string, args []string) error {
	log, err := os.Create(filepath.Join(e.Dir, name+".log"))
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("testenv: start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	return nil
}

type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after 10 s.
func (p *process) stop() {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	p.log.Close()
}

// waitFor polls url until it answers 200, the process dies, or ctx ends.
func waitFor(ctx context.Context, hc *http.Client, url string, e *Env, name string) error {
	var last string
	for {
		e.mu.Lock()
		var p *process
		for _, q := range e.procs {
			if q.name == name {
				p = q
			}
		}
		e.mu.Unlock()
		if p != nil && p.exited() {
			return fmt.Errorf("testenv: %s exited during start-up; log:\n%s", name, e.LogTail(name, 30))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err == nil {
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(buf.String()))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: %s not ready at %s (%s); log:\n%s", name, url, last, e.LogTail(name, 30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePorts asks the kernel for n free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("testenv: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
