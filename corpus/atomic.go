package corpus

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic streams a file through write into a temporary file beside
// path, syncs it and renames it over path, so that a reader (or a resume
// after a kill) sees the old file or the new one, never a mix. It is
// WriteFileAtomic for files too large to build in memory first, such as a
// campaign's checkpoint.
func WriteAtomic(path string, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
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
