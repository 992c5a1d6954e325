//go:build unix

package outcomes

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f for the life of the process's
// descriptor, or returns ErrSpoolLocked when another process holds it.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrSpoolLocked
	}
	return err
}
