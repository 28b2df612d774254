// Package capread reads files under a size cap. A campaign, a seed or a
// trace file can come from anyone, and os.ReadFile of /dev/zero (or of a
// multi-gigabyte file) reads until memory runs out: every file actfuzz
// takes as input goes through ReadFile with a cap named in
// docs/limits.md.
package capread

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrCapped is wrapped by the error of a file over its cap.
var ErrCapped = errors.New("over its cap")

// CapError is a file over its cap: Cap names the cap (max_seed_bytes, …).
type CapError struct {
	Path  string
	Cap   string
	Limit int64
}

func (e *CapError) Error() string {
	return fmt.Sprintf("%s: over the cap of %d bytes (%s)", e.Path, e.Limit, e.Cap)
}

func (e *CapError) Unwrap() error { return ErrCapped }

// ReadFile reads at most limit bytes of path; a longer file is a
// *CapError (a regular file is refused by its size, unread; nothing else
// is read beyond limit+1 bytes). With regular set, a
// path that is not a regular file (a device such as /dev/zero, a FIFO
// whose open would block until a writer comes, a directory) is refused
// before it is opened.
func ReadFile(path string, limit int64, capName string, regular bool) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if regular && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Mode().IsRegular() && st.Size() > limit {
		// Refused unread (a large sparse file reads as fast as any).
		return nil, &CapError{Path: path, Cap: capName, Limit: limit}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, limit, capName)
}

// Read reads r to its end under the cap (path names it in the error).
func Read(r io.Reader, path string, limit int64, capName string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &CapError{Path: path, Cap: capName, Limit: limit}
	}
	return b, nil
}
