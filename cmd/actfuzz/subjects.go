package main

import (
	"fmt"

	"github.com/actfuzz/actfuzz/netenv"
)

// openSubject maps a --subject name (or a seed's subject) to a subject.
// This is the one place that knows every subject, so no global registry is
// needed.
func openSubject(name string) (netenv.Subject, error) {
	switch name {
	case "", "native":
		return netenv.Native{}, nil
	}
	return nil, fmt.Errorf("unknown subject %q (want native)", name)
}
