package simcli

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestProbePhasesBounded: Phases of 0, negative, NaN or infinite hours
// looped for ever (NaN: no round ever fell in the window) growing its
// result, and tiny windows could stall on rounding; now bad hours give no
// phases and every phase holds at least one round.
func TestProbePhasesBounded(t *testing.T) {
	tr := &GPTTrace{}
	for i := 0; i < 50; i++ {
		tr.Rounds = append(tr.Rounds, GPTRound{Time: 1e6 + 60*float64(i), GPT: map[string]int{"a": i % 3}})
	}
	for _, h := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), 1e-300, 1e-12, 5e-324, 1, 1e308} {
		done := make(chan []GPTPhase, 1)
		go func() { done <- tr.Phases(h) }()
		select {
		case ph := <-done:
			assert.LessOrEqual(t, len(ph), len(tr.Rounds), "hours %v", h)
			if h > 0 && !math.IsInf(h, 0) {
				assert.NotEmpty(t, ph, "hours %v", h)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Phases(%v) does not return", h)
		}
	}
}
