package sim

import (
	"github.com/sia-sched/sia/goodput"
)

// App holds the per-model constants of the simulated ground truth
// (paper §5.1 and the published artifact).
type App struct {
	Name string
	// InitBatch is M0, the smallest validated batch size; MaxBatch the largest.
	InitBatch, MaxBatch int
	// MaxEpochs is the training length: a job finishes after MaxEpochs epochs of
	// progress.
	MaxEpochs int
	// RestartDelay is the checkpoint-restore time charged at every (re)start,
	// in seconds (the same on every GPU type).
	RestartDelay float64
	// Slowdown calibrates simulated progress to real runs: progress per second
	// is divided by it.
	Slowdown float64
	// RestartCost is the S the published scheduler uses in its restart
	// factor (a name table that differs from RestartDelay for cifar10 and yolov3).
	RestartCost float64
	// Stages gives, for a hybrid-parallel (pipeline) application, the GPUs
	// of one data-parallel replica (its pipeline stages) per simulator GPU
	// type; the application runs only on these types and only in whole
	// replicas. nil for data-parallel applications. See Hybrid.
	Stages map[string]int
	// MicroBatches is, for a hybrid-parallel application, the number of
	// size-1 micro-batches each replica runs per optimizer step (the global
	// batch is MicroBatches × replicas); 0 for data-parallel applications.
	MicroBatches int
}

// Truth is a ground truth: what really happens when a job runs. The engine
// charges time from it; schedulers never see it except through what a job
// reports after running (and the oracle and bootstrap modes, which read the
// profiles a real deployment would collect).
type Truth interface {
	// Name describes the ground truth ("trace:DIR" or "model").
	Name() string
	// App returns the constants of an application.
	App(name string) (*App, bool)
	// Supports reports whether the application can run on the GPU type.
	Supports(app, typ string) bool
	// LocalRange returns the per-GPU batch size limits (memory) of app on typ.
	LocalRange(app, typ string) (min, max int)
	// PlacementMaxLocal returns the largest per-GPU batch profiled for this
	// placement shape (GPUs per node), used when the job picks its batch size.
	PlacementMaxLocal(app, typ string, shape []int) int
	// ReplicaMaxLocal returns the largest per-GPU batch profiled with exactly
	// this many replicas on one or more nodes, if any (the artifact's memory fix).
	ReplicaMaxLocal(app, typ string, replicas int) (int, bool)
	// StepTime returns the true time of one optimizer step (including sync)
	// and of its all-reduce, for a placement shape and per-GPU batch size.
	// For a hybrid-parallel application (App.Stages) it returns the time of
	// one micro-batch of that size through one pipeline stage (without the
	// all-reduce) and the placement's all-reduce; the engine composes the
	// pipeline's step from them (see GPTApp).
	StepTime(app, typ string, shape []int, local int) (step, sync float64, ok bool)
	// GradStats returns the true gradient statistics during an epoch at a
	// global batch size.
	GradStats(app string, batch float64, epoch int) goodput.GradStats
	// Progress returns the progress (M0-equivalent iterations) at the start of
	// an epoch; Progress(app, MaxEpochs) is the completion target.
	Progress(app string, epoch int) float64
	// Iterations returns the number of optimizer steps at batch size batch
	// after completing the given epoch (Gavel's step counts).
	Iterations(app string, batch float64, epoch int) float64
	// Xput1 returns the 1-GPU throughput (samples/s) used for cross-type
	// projection: max local batch / max step time over 1-GPU profiles.
	Xput1(app, typ string) float64
	// Profile returns every profiled (nodes, replicas, batch) → time row of
	// app on typ with at most maxNodes nodes and maxReplicas replicas
	// (0 = unbounded): the oracle's knowledge.
	// For a hybrid-parallel application the rows are pipeline
	// observations: Replicas counts pipelines and StepTime is the per-stage
	// micro-batch time plus the all-reduce (bootstrap.Measurement's
	// convention).
	Profile(app, typ string, maxNodes, maxReplicas int) []goodput.Observation
	// SeedProfile returns the 1-GPU profile of app on typ over several batch
	// sizes: what a deployment collects at submission (bootstrap input).
	SeedProfile(app, typ string) []goodput.Observation
}

// appConstants are the per-model constants of the published simulator.
var appConstants = map[string]App{
	"bert":        {Name: "bert", MaxEpochs: 2, RestartDelay: 120, Slowdown: 1.2, RestartCost: 120},
	"cifar10":     {Name: "cifar10", MaxEpochs: 100, RestartDelay: 50, Slowdown: 1.8, RestartCost: 30},
	"deepspeech2": {Name: "deepspeech2", MaxEpochs: 80, RestartDelay: 25, Slowdown: 1.2, RestartCost: 25},
	"imagenet":    {Name: "imagenet", MaxEpochs: 90, RestartDelay: 250, Slowdown: 1.2, RestartCost: 250},
	"yolov3":      {Name: "yolov3", MaxEpochs: 50, RestartDelay: 80, Slowdown: 1.2, RestartCost: 45},
	"ncf":         {Name: "ncf", MaxEpochs: 10, RestartDelay: 15, Slowdown: 1.5, RestartCost: 30},
	// The hybrid-parallel GPT job of paper §5.3 trains for BERT's epochs
	// (its validation curves are BERT's); no calibration (slowdown 1), the
	// default restart delay.
	GPTApp: {Name: GPTApp, MaxEpochs: 2, RestartDelay: defaultRestartDelay, Slowdown: 1, RestartCost: defaultRestartDelay},
}

// AppNames lists the applications both ground truths know, sorted.
var AppNames = []string{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}

// RescaleDelay, Slowdown fallbacks for unknown models (artifact: 30 s, 1.2).
const (
	defaultRestartDelay = 30
	defaultSlowdown     = 1.2
)
