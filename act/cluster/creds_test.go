package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// operator is a NATS operator-mode setup (decentralized JWT auth, as NGS
// and `nsc` deployments use): an operator that signed an account with
// JetStream enabled, held by the server's memory resolver.
type operator struct {
	claims         *jwt.OperatorClaims
	account        nkeys.KeyPair
	accPub, accJWT string
	sysPub, sysJWT string // the system account JetStream needs
}

func newOperator(t *testing.T) operator {
	t.Helper()
	op, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	opPub, _ := op.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "actfuzz-test"
	opJWT, err := oc.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		t.Fatal(err)
	}
	account := func(name string, js bool) (nkeys.KeyPair, string, string) {
		kp, err := nkeys.CreateAccount()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		ac := jwt.NewAccountClaims(pub)
		ac.Name = name
		if js {
			// JetStream is off for an account unless its JWT grants it.
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		enc, err := ac.Encode(op)
		if err != nil {
			t.Fatal(err)
		}
		return kp, pub, enc
	}
	acc, accPub, accJWT := account("lab", true)
	_, sysPub, sysJWT := account("SYS", false)
	return operator{claims: claims, account: acc, accPub: accPub, accJWT: accJWT, sysPub: sysPub, sysJWT: sysJWT}
}

// creds writes a credentials file (the user's JWT and NKey seed, the format
// `nsc generate creds` writes) for a new user signed by account.
func creds(t *testing.T, account nkeys.KeyPair, name string) (path string, seed []byte) {
	t.Helper()
	u, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	uPub, _ := u.PublicKey()
	uc := jwt.NewUserClaims(uPub)
	uc.Name = name
	uJWT, err := uc.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	seed, err = u.Seed()
	if err != nil {
		t.Fatal(err)
	}
	file, err := jwt.FormatUserConfig(uJWT, seed)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), name+".creds")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, seed
}

// A server in operator mode: a worker host and a coordinator reach it
// only with a credentials file of its account (--nats-creds), a user of
// an account it does not trust or a missing file is refused without the
// seed in the error, and a campaign runs over it as on a plain server.
func TestCredsFile(t *testing.T) {
	op := newOperator(t)
	resolver := &server.MemAccResolver{}
	for pub, enc := range map[string]string{op.accPub: op.accJWT, op.sysPub: op.sysJWT} {
		if err := resolver.Store(pub, enc); err != nil {
			t.Fatal(err)
		}
	}
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		MaxPayload: 8 << 20, TrustedOperators: []*jwt.OperatorClaims{op.claims}, AccountResolver: resolver, SystemAccount: op.sysPub})
	url := s.ClientURL()

	good, goodSeed := creds(t, op.account, "lab-user")
	stranger := newOperator(t) // an account the server never saw
	foreign, foreignSeed := creds(t, stranger.account, "stranger")
	for name, o := range map[string]ConnectOptions{
		"no credentials":     {URL: url},
		"untrusted account":  {URL: url, Creds: foreign},
		"missing creds file": {URL: url, Creds: filepath.Join(t.TempDir(), "none.creds")},
	} {
		nc, err := Connect(o)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
			continue
		}
		for _, seed := range [][]byte{goodSeed, foreignSeed} {
			if strings.Contains(err.Error(), string(seed)) {
				t.Errorf("%s: the error shows a seed: %v", name, err)
			}
		}
		t.Logf("%s: %v", name, err)
	}

	campaignOver(t, ConnectOptions{URL: url, Creds: good}, "creds", "with a credentials file")
}
