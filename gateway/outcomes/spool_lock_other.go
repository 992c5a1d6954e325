//go:build !unix

package outcomes

import "os"

// lockFile does not lock where flock is missing: there each gateway must
// be given a spool file of its own.
func lockFile(*os.File) error { return nil }
