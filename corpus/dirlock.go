package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// LockName is the file in an output directory whose lock says that a
// process writes there (LockDir).
const LockName = ".lock"

// LockedError is LockDir's error when another process holds the lock.
type LockedError struct {
	Dir string
	PID int // the holder's process id as it wrote it; 0 if unknown
}

func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is in use by another actfuzz process (pid %d)", e.Dir, e.PID)
	}
	return fmt.Sprintf("%s is in use by another actfuzz process", e.Dir)
}

// ErrLocked matches a *LockedError with errors.Is.
var ErrLocked = errors.New("directory in use by another process")

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// LockDir takes the lock of output directory dir (made if missing) for
// this process until unlock: one campaign process a directory. Two
// processes writing one campaign's checkpoint, configuration log and
// seeds would interleave them, and a resume removes the debris of the
// writes its predecessor did not finish (RemoveDebris), which would be
// the other process's writes in progress. The lock is the kernel's
// (flock(2) on dir/.lock), so it ends with its process however that
// ends: a kill -9 leaves no stale lock to clear by hand. The file keeps
// the holder's pid, for the message. On systems without flock, LockDir
// locks nothing (dirlock_other.go).
func LockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return lockFile(dir, filepath.Join(dir, LockName))
}

// debrisName matches the temporary files of WriteAtomic (os.CreateTemp
// replaces the pattern's * by decimal digits): a file of that name exists
// only while a write is in progress, or after its process died mid-write.
var debrisName = regexp.MustCompile(`^\..+\.tmp[0-9]+$`)

// RemoveDebris deletes, in dir and below, the temporary files that atomic
// writes (WriteAtomic, WriteFileAtomic) of a process killed mid-write
// left: a checkpoint's can be as large as the store. The caller must hold
// dir's lock (LockDir), so that no write of another process is in
// progress there. It returns how many files it removed.
func RemoveDebris(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() && debrisName.MatchString(d.Name()) {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
