//go:build unix

package corpus

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func lockFile(dir, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &LockedError{Dir: dir, PID: pid}
		}
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	// The pid is for the message of a process that finds the lock held;
	// the lock itself is the flock, which the file's removal would not
	// release, so the file stays.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
