// Package cliprobe holds a test that builds the example programs and runs
// them with bad flags: each must exit non-zero at once with a one-line
// message naming the flag, never hang, panic or run with the value.
package cliprobe
