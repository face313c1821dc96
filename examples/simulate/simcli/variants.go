package simcli

import (
	"fmt"
	"strings"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
)

// Sia's two headline rows and their ablation (docs/results.md):
//
//   - "sia -variant paper" is the project's scheduler: the paper's
//     formulation (no artifact knobs), goodput estimates up to the
//     application's maximum batch size, this library's bootstrap (1-GPU
//     profiles of every type seeded into the job's bootstrap.Tracker,
//     projection from the type with the most multi-GPU data) and package
//     sia's placement;
//   - "sia-artifact" is the published scheduler as the published simulator
//     runs it: estimates capped at the workload's batch_size, per-type models
//     learned only from what the job ran on, projection from the first type
//     by the static 1-GPU throughput ratio (bootstrap.RatioProjection), every
//     artifact knob (fillers, rounding, clipping, restart grace, per-model
//     restart penalties, type-blind first placement) and the artifact's
//     round-robin placer, whatever -variant says.
//
// Either name may be followed by modifiers, applied left to right, each
// changing one difference: +cap/+nocap, +seed/+noseed, +tracker/+ratio/
// +noproj, +artifact/+paper (all knobs on/off), +blind/+noblind,
// +filler/+nofiller, +round/+noround, +clip/+noclip, +grace/+nograce,
// +penalties/+nopenalties (one knob each), +artplace/+libplace. "sia+..."
// starts from the knobs of -variant. For example "sia-artifact+nocap" or
// "sia+ratio+noseed -variant paper".

var allKnobs = *sia.PublishedArtifact()

// siaVariantPolicy returns the policy of a sia/sia-artifact name with
// modifiers; ok is false for other names (and for plain "sia", which is
// registered on its own).
func siaVariantPolicy(name string) (p Policy, ok bool, err error) {
	parts := strings.Split(name, "+")
	var base siapolicy.Options
	artifact := false
	switch parts[0] {
	case "sia":
		if len(parts) == 1 {
			return p, false, nil
		}
	case "sia-artifact":
		artifact = true
		base.CapAtRequest, base.NoSeed, base.Projection, base.ArtifactPlacement = true, true, siapolicy.StaticRatioProjection, true
	default:
		return p, false, nil
	}
	var edits []func(*siapolicy.Options, *sia.ArtifactKnobs)
	for _, m := range parts[1:] {
		e, err := siaModifier(m)
		if err != nil {
			return p, true, fmt.Errorf("-policy %q: %w", name, err)
		}
		edits = append(edits, e)
	}
	base.Name = name
	base.Mode = bootstrap.Profiled
	return Policy{Name: name, New: func(env Env) (sim.Policy, error) {
		o := base
		k := sia.ArtifactKnobs{}
		if env.Artifact != nil {
			k = *env.Artifact
		}
		if artifact {
			k = allKnobs
		}
		for _, e := range edits {
			e(&o, &k)
		}
		o.Sia = &sia.Options{Artifact: &k, P: env.P, Lambda: env.Lambda}
		return siapolicy.New(env.Cluster, env.Truth, o)
	}}, true, nil
}

// siaModifier returns the edit of one modifier.
func siaModifier(m string) (func(*siapolicy.Options, *sia.ArtifactKnobs), error) {
	knob := func(set func(*sia.ArtifactKnobs, bool), on bool) func(*siapolicy.Options, *sia.ArtifactKnobs) {
		return func(_ *siapolicy.Options, k *sia.ArtifactKnobs) { set(k, on) }
	}
	opt := func(set func(*siapolicy.Options)) func(*siapolicy.Options, *sia.ArtifactKnobs) {
		return func(o *siapolicy.Options, _ *sia.ArtifactKnobs) { set(o) }
	}
	on := !strings.HasPrefix(m, "no")
	switch m {
	case "cap", "nocap":
		return opt(func(o *siapolicy.Options) { o.CapAtRequest = on }), nil
	case "seed", "noseed":
		return opt(func(o *siapolicy.Options) { o.NoSeed = !on }), nil
	case "tracker":
		return opt(func(o *siapolicy.Options) { o.Projection = siapolicy.TrackerProjection }), nil
	case "ratio":
		return opt(func(o *siapolicy.Options) { o.Projection = siapolicy.StaticRatioProjection }), nil
	case "noproj":
		return opt(func(o *siapolicy.Options) { o.Projection = siapolicy.NoProjection }), nil
	case "artplace", "libplace":
		return opt(func(o *siapolicy.Options) { o.ArtifactPlacement = m == "artplace" }), nil
	case "artifact":
		return func(_ *siapolicy.Options, k *sia.ArtifactKnobs) { *k = allKnobs }, nil
	case "paper":
		return func(_ *siapolicy.Options, k *sia.ArtifactKnobs) { *k = sia.ArtifactKnobs{} }, nil
	case "blind", "noblind":
		return knob(func(k *sia.ArtifactKnobs, v bool) { k.BlindFirst = v }, on), nil
	case "filler", "nofiller":
		return knob(func(k *sia.ArtifactKnobs, v bool) { k.Filler = v }, on), nil
	case "round", "noround":
		return knob(func(k *sia.ArtifactKnobs, v bool) { k.Round = v }, on), nil
	case "clip", "noclip":
		return knob(func(k *sia.ArtifactKnobs, v bool) { k.Clip = v }, on), nil
	case "grace", "nograce":
		return knob(func(k *sia.ArtifactKnobs, v bool) { k.RestartGrace = v }, on), nil
	case "penalties", "nopenalties":
		return knob(func(k *sia.ArtifactKnobs, v bool) { k.ModelPenalties = v }, on), nil
	}
	return nil, fmt.Errorf("unknown modifier %q", m)
}

// siaArtifactPolicy is the registered "sia-artifact" policy.
func siaArtifactPolicy() Policy {
	p, _, err := siaVariantPolicy("sia-artifact")
	if err != nil {
		panic(err) // a constant name without modifiers
	}
	return p
}
