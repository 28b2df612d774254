package corpus

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Files written atomically (seeds, findings.md, the report, checkpoints)
// and streamed (CreateFile: --trace) get the mode os.Create gives, under
// the same umask, like the PNGs that plotting libraries save with
// os.Create; and a rewrite keeps it.
func TestWriteModes(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "made-by-os-create")
	f, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := mode(t, ref)
	for _, tc := range []struct {
		name  string
		write func(path string) error
	}{
		{"WriteFileAtomic", func(p string) error { return WriteFileAtomic(p, []byte("x")) }},
		{"WriteAtomic twice", func(p string) error {
			if err := WriteAtomic(p, func(w io.Writer) error { _, err := w.Write([]byte("1")); return err }); err != nil {
				return err
			}
			return WriteAtomic(p, func(w io.Writer) error { _, err := w.Write([]byte("2")); return err })
		}},
		{"CreateFile", func(p string) error {
			f, err := CreateFile(p)
			if err != nil {
				return err
			}
			return f.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := tc.write(p); err != nil {
				t.Fatal(err)
			}
			if got := mode(t, p); got != want {
				t.Errorf("mode %v, want %v (os.Create's under this umask)", got, want)
			}
		})
	}
	if n, err := RemoveDebris(dir); err != nil || n != 0 {
		t.Errorf("RemoveDebris after complete writes: %d files, %v", n, err)
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
