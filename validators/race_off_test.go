//go:build !race

package validators_test

// raceEnabled is true under the race detector, which makes sync.Pool drop
// what it holds at random: allocation counts then vary from run to run.
const raceEnabled = false
