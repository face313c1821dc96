package simcli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
)

func TestSiaModifiers(t *testing.T) {
	noBlind := allKnobs
	noBlind.BlindFirst = false
	for _, tc := range []struct {
		mods     []string
		start    sia.ArtifactKnobs
		wantOpt  siapolicy.Options
		wantKnob sia.ArtifactKnobs
	}{
		{[]string{"cap", "noseed", "ratio", "artplace"}, sia.ArtifactKnobs{},
			siapolicy.Options{CapAtRequest: true, NoSeed: true, Projection: siapolicy.StaticRatioProjection, ArtifactPlacement: true}, sia.ArtifactKnobs{}},
		{[]string{"noblind"}, allKnobs, siapolicy.Options{}, noBlind},
		{[]string{"artifact", "nofiller", "filler"}, sia.ArtifactKnobs{}, siapolicy.Options{}, allKnobs},
		{[]string{"paper", "grace", "penalties"}, allKnobs, siapolicy.Options{}, sia.ArtifactKnobs{RestartGrace: true, ModelPenalties: true}},
		{[]string{"noproj", "noround", "noclip"}, allKnobs, siapolicy.Options{Projection: siapolicy.NoProjection},
			sia.ArtifactKnobs{Filler: true, RestartGrace: true, ModelPenalties: true, BlindFirst: true}},
	} {
		t.Run(strings.Join(tc.mods, "+"), func(t *testing.T) {
			var o siapolicy.Options
			k := tc.start
			for _, m := range tc.mods {
				e, err := siaModifier(m)
				require.NoError(t, err)
				e(&o, &k)
			}
			assert.Equal(t, tc.wantOpt, o)
			assert.Equal(t, tc.wantKnob, k)
		})
	}
	_, err := siaModifier("bogus")
	assert.ErrorContains(t, err, `"bogus"`)
}

func TestSiaVariantNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ok     bool
		errSub string
	}{
		{"sia", false, ""}, {"gavel", false, ""}, {"sia-artifact", true, ""}, {"sia+cap", true, ""},
		{"sia-artifact+nocap+libplace", true, ""}, {"sia+bogus", true, "unknown modifier"},
	} {
		p, ok, err := siaVariantPolicy(tc.name)
		assert.Equal(t, tc.ok, ok, tc.name)
		if tc.errSub != "" {
			assert.ErrorContains(t, err, tc.errSub, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		if ok {
			assert.Equal(t, tc.name, p.Name)
		}
	}
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "sia-artifact,sia-artifact+nocap,sia+ratio", "-json", "-noftf"}, &out, &errb)
	require.NoError(t, err, errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	for i, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		assert.Equal(t, []string{"sia-artifact", "sia-artifact+nocap", "sia+ratio"}[i], m["policy"])
		assert.Equal(t, 0.0, m["unfinished"])
	}
	err = Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "sia+bogus"}, &out, &errb)
	assert.ErrorContains(t, err, "unknown policy")
}
