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
//
// A directory that LockDir made and that holds nothing but the lock at
// unlock (a command that failed before it wrote anything, such as a bad
// flag found after the lock) is removed, with the parents LockDir made
// that are then empty: a failed command leaves no directory behind.
func LockDir(dir string) (unlock func(), err error) {
	// made is the outermost directory this call creates ("" if dir
	// exists).
	made := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = d
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock := filepath.Join(dir, LockName)
	release, err := lockFile(dir, lock)
	if err != nil || made == "" {
		return release, err
	}
	return func() {
		ents, err := os.ReadDir(dir)
		if err == nil && len(ents) == 1 && ents[0].Name() == LockName {
			// Removed while still locked: a process that opened it
			// before finds it locked, and none holds the lock of a
			// file unlinked under it.
			os.Remove(lock)
			for d := filepath.Clean(dir); os.Remove(d) == nil && d != made; d = filepath.Dir(d) {
			}
		}
		release()
	}, nil
}

// debrisName matches the temporary files of WriteAtomic (createTemp:
// ".<name>.tmp<decimal digits>"): a file of that name exists
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
