package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/actfuzz/actfuzz/act"
)

// pki is a CA and a server and a client certificate it signed, as PEM
// files in a directory.
type pki struct {
	ca, serverCert, serverKey, clientCert, clientKey string
	serverTLS                                        *tls.Config
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "actfuzz test CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage, ip bool) (string, string) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, NotBefore: now.Add(-time.Hour),
			NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if ip {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kd)
	}
	p := pki{ca: write("ca.pem", "CERTIFICATE", caDER)}
	p.serverCert, p.serverKey = leaf(2, "server", x509.ExtKeyUsageServerAuth, true)
	p.clientCert, p.clientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth, false)
	cert, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	p.serverTLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	return p
}

// A server that wants mutual TLS and a password: Connect reaches it only
// with the CA, a client certificate and the password, never shows the
// password in an error, and a campaign runs over it as on a plain one.
func TestTLSAndPassword(t *testing.T) {
	p := newPKI(t)
	const secret = "s3cret-pw"
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		MaxPayload: 8 << 20, TLS: true, TLSVerify: true, TLSConfig: p.serverTLS, TLSTimeout: 5, Username: "actfuzz", Password: secret})
	port := s.Addr().(*net.TCPAddr).Port
	url := func(pw string) string { return "tls://actfuzz:" + pw + "@127.0.0.1:" + strconv.Itoa(port) }
	good := ConnectOptions{URL: url(secret), CA: p.ca, Cert: p.clientCert, Key: p.clientKey, Name: t.Name()}
	for name, o := range map[string]ConnectOptions{
		"no CA":              {URL: good.URL, Cert: p.clientCert, Key: p.clientKey},
		"no client cert":     {URL: good.URL, CA: p.ca},
		"wrong password":     {URL: url("wrong-pw"), CA: p.ca, Cert: p.clientCert, Key: p.clientKey},
		"missing client key": {URL: good.URL, CA: p.ca, Cert: p.clientCert, Key: filepath.Join(t.TempDir(), "none.pem")},
	} {
		nc, err := Connect(o)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "wrong-pw") {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
		t.Logf("%s: %v", name, err)
	}

	campaignOver(t, good, "tls", "over TLS")
}

// campaignOver runs the test campaign with one worker host and a
// coordinator, each connected with o, and checks that it ends as the
// local reference does (how says what the connection is, for messages).
func campaignOver(t *testing.T, o ConnectOptions, id, how string) {
	t.Helper()
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ho := o
	ho.Name = t.Name() + "-host"
	hc, err := Connect(ho)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	host, err := NewWorker(hc, WorkerOptions{Procs: 1, Poll: 100 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- host.Serve(ctx) }()
	co := o
	co.Name = t.Name()
	nc, err := Connect(co)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	dir := t.TempDir()
	rep, ex := clusterRun(t, context.Background(), c, nc, dir, Options{ID: id}, nil, act.Options{})
	if a, b := outcome(ref), outcome(rep); a != b {
		t.Fatalf("local:\n%s\ncluster %s:\n%s", a, how, b)
	}
	sameSeeds(t, ref, rep, refDir, dir)
	if st := ex.Stats(); st.Results != testBudget || host.Stats().Chunks == 0 {
		t.Fatalf("%+v; the host ran %d chunks", st, host.Stats().Chunks)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
