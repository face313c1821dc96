// Command sia-controller runs the Sia scheduler as a Kubernetes controller for
// opted-in batch/v1 Indexed Jobs (see examples/kube/README.md).
//
//	sia-controller -namespace sia-system [-kubeconfig FILE] [-period 60s]
//	    [-round-deadline 30s] [-solve-timeout 5s] [-gpu-type-label nvidia.com/gpu.product]
//	    [-leader-elect=true] [-metrics-addr :8080]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/examples/kube/metrics"
	"github.com/sia-sched/sia/examples/kube/siakube"
	"github.com/sia-sched/sia/sia"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

type config struct {
	kubeconfig, namespace, typeLabel, resource, metricsAddr, identity, lease string
	period, debounce, deadline, solve, restore                               time.Duration
	leaderElect                                                              bool
}

func parseFlags(args []string, out io.Writer) (config, error) {
	fs := flag.NewFlagSet("sia-controller", flag.ContinueOnError)
	fs.SetOutput(out)
	var c config
	host, _ := os.Hostname()
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file (empty: in-cluster config)")
	fs.StringVar(&c.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the controller's namespace (records, Lease); default $POD_NAMESPACE")
	fs.StringVar(&c.typeLabel, "gpu-type-label", siakube.DefaultTypeLabel, "node label holding the GPU type")
	fs.StringVar(&c.resource, "gpu-resource", string(siakube.DefaultGPUResource), "extended resource counting GPUs")
	fs.StringVar(&c.metricsAddr, "metrics-addr", ":8080", "address of /metrics, /healthz, /readyz (empty: none)")
	fs.StringVar(&c.identity, "identity", host, "this replica's name in the Lease")
	fs.StringVar(&c.lease, "lease", "sia-controller", "the Lease's name")
	fs.DurationVar(&c.period, "period", controller.DefaultPeriod, "time between rounds")
	fs.DurationVar(&c.debounce, "debounce", controller.DefaultDebounce, "quiet time after an event before an early round")
	fs.DurationVar(&c.deadline, "round-deadline", controller.DefaultRoundDeadline, "deadline of a whole round (API writes included)")
	fs.DurationVar(&c.solve, "solve-timeout", sia.DefaultRoundTimeout, "deadline of the scheduling step (sia Options.RoundTimeout)")
	fs.DurationVar(&c.restore, "restore-delay", controller.DefaultRestoreDelay, "pin after a resume for jobs that set neither restore-delay nor restart-cost")
	fs.BoolVar(&c.leaderElect, "leader-elect", true, "act only while holding the Lease")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.namespace == "":
		return c, errors.New("-namespace (or $POD_NAMESPACE) is required")
	case c.period <= 0 || c.debounce < 0 || c.deadline <= 0 || c.solve <= 0 || c.restore < 0:
		return c, errors.New("-period, -round-deadline and -solve-timeout must be > 0, -debounce and -restore-delay ≥ 0")
	case c.solve >= c.deadline:
		return c, fmt.Errorf("-solve-timeout %v must be below -round-deadline %v", c.solve, c.deadline)
	case c.leaderElect && c.identity == "":
		return c, errors.New("-identity is required with -leader-elect")
	}
	return c, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx, cfg)
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sia-controller:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var rc *rest.Config
	var err error
	if cfg.kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	} else {
		rc, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("client config: %w", err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg)
	c, err := controller.New(client, controller.Config{
		Namespace: cfg.namespace, Period: cfg.period, Debounce: cfg.debounce, RoundDeadline: cfg.deadline,
		RestoreDelay: cfg.restore, Options: &sia.Options{RoundTimeout: cfg.solve},
		Nodes:   siakube.NodeConfig{TypeLabel: cfg.typeLabel, Resource: corev1.ResourceName(cfg.resource)},
		Metrics: m, Logger: log,
	})
	if err != nil {
		return err
	}
	if cfg.metricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.metricsAddr)
		if err != nil {
			return err
		}
		healthy := func() error {
			if last := c.LastRound(); !last.IsZero() && time.Since(last) > 3*cfg.period+cfg.deadline {
				return fmt.Errorf("no round since %s", last.Format(time.RFC3339))
			}
			return nil
		}
		ready := func() error {
			if !c.Synced() {
				return errors.New("informer caches not synced")
			}
			return nil
		}
		srv := &http.Server{Handler: metrics.Handler(reg, healthy, ready), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		log.Info("serving metrics", "addr", ln.Addr().String())
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	if !cfg.leaderElect {
		return c.Run(ctx)
	}
	return controller.RunWithLeaderElection(ctx, client, c, controller.LeaderConfig{
		Lease: cfg.lease, Identity: cfg.identity,
		OnLeading: func(on bool) { log.Info("leader election", "leading", on, "identity", cfg.identity) },
	})
}
