package corpus

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// FileMode is the mode every file actfuzz writes is created with, under
// the process's umask: seeds, traces, plots, findings.md, the report, the
// coverage table, checkpoints and status.json alike. 0666 is what
// os.Create (and so every library that saves a file, such as gonum/plot's
// PNGs) uses, which leaves the choice to the user's umask as cp(1) and
// touch(1) do: 0644 under the usual 022, 0600 under 077 for a user who
// keeps their files private. Nothing actfuzz writes is a secret of its own.
const FileMode fs.FileMode = 0o666

// CreateFile creates or truncates path with FileMode (under the umask),
// for a file streamed to a path the user named (sim --trace, replay
// --trace), where an atomic rename over it would be wrong (/dev/stdout).
func CreateFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, FileMode)
}

// createTemp creates a new file named "."+base+".tmp<random>" in dir with
// FileMode under the umask (os.CreateTemp's files are 0600 whatever the
// umask says), for WriteAtomic; RemoveDebris knows the name.
func createTemp(dir, base string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, FileMode)
		if err == nil || !errors.Is(err, fs.ErrExist) || try >= 1000 {
			return f, err
		}
	}
}

// WriteAtomic streams a file through write into a temporary file beside
// path, syncs it and renames it over path, so that a reader (or a resume
// after a kill) sees the old file or the new one, never a mix. It is
// WriteFileAtomic for files too large to build in memory first, such as a
// campaign's checkpoint. The file has FileMode under the umask.
func WriteAtomic(path string, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := createTemp(dir, filepath.Base(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	bw := bufio.NewWriterSize(f, 1<<20)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	return os.Rename(tmp, path)
}
