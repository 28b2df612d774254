package corpus

import (
	"fmt"
	"strings"

	namecheck "github.com/actfuzz/actfuzz/internal/names"
)

// MaxNameLen (max_name_length) caps a condition's name, in characters
// (namecheck.MaxLen).
const MaxNameLen = namecheck.MaxLen

// faultPrefix begins the directories of fault findings (fault-hang, …):
// no condition's file name may begin with it.
const faultPrefix = "fault-"

// CheckName refuses a condition name that internal/names refuses (empty,
// over MaxNameLen characters, not printable) or that would write its
// findings into the directory of a fault kind. The error starts with
// "name" and quotes no more than the name's first characters.
func CheckName(name string) error {
	if err := namecheck.Check(name); err != nil {
		return err
	}
	if strings.HasPrefix(FileKey(name), faultPrefix) {
		return fmt.Errorf("name %q: %s… names the directories of fault findings (findings/fault-hang/, …): choose another", name, faultPrefix)
	}
	return nil
}

// FileName is a name as it appears in file names (a finding's directory):
// every character but ASCII letters, digits, - and _ becomes _, so no
// name can climb out of the findings directory or hide in a dot file.
func FileName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// FileKey is what two names that would share a directory have in common:
// FileName lower-cased, as a case-insensitive file system (macOS,
// Windows) sees it. Conditions of one campaign must differ in it.
func FileKey(name string) string { return strings.ToLower(FileName(name)) }
