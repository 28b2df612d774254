package netenv

import (
	"fmt"
	"slices"
)

// ECNMode is the ecn parameter.
type ECNMode uint8

const (
	ECNOff ECNMode = iota
	ECNOn
)

// ECNNames are the values of the ecn parameter.
var ECNNames = [...]string{"off", "on"}

func (m ECNMode) String() string {
	if int(m) < len(ECNNames) {
		return ECNNames[m]
	}
	return fmt.Sprintf("ecn(%d)", uint8(m))
}

// MarshalText writes the mode by name.
func (m ECNMode) MarshalText() ([]byte, error) {
	if int(m) >= len(ECNNames) {
		return nil, fmt.Errorf("ecn %d: want one of %v", uint8(m), ECNNames)
	}
	return []byte(ECNNames[m]), nil
}

// UnmarshalText reads a mode by name.
func (m *ECNMode) UnmarshalText(b []byte) error {
	i := slices.Index(ECNNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("ecn %q: want one of %v", b, ECNNames)
	}
	*m = ECNMode(i)
	return nil
}

// ecnPacket is a packet type that carries ECN codepoints (sim.Packet). A
// link over packets that do not marks nothing: the subject cannot
// express ecn and says so in its capabilities.
type ecnPacket interface {
	ECNCapable() bool
	MarkCE()
}

// markable reports whether p may be marked instead of dropped.
func markable(p any) (ecnPacket, bool) {
	e, ok := p.(ecnPacket)
	return e, ok && e.ECNCapable()
}

// UsesECN reports whether any phase of sched turns ECN on: the endpoints
// then negotiate it for the whole connection (RFC 3168 §6.1.1).
func UsesECN(sched Schedule) bool {
	for i := range sched {
		if sched[i].Env.ECN == ECNOn {
			return true
		}
	}
	return false
}
