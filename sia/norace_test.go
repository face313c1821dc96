//go:build !race

package sia

// raceEnabled is true when the tests run under the race detector, which
// slows the code down too much for wall-clock bounds.
const raceEnabled = false
