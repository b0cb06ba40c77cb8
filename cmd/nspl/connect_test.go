package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/session"
)

func TestParseServeArgs(t *testing.T) {
	base := []string{"serve", "--node", "n1", "--api-addr", "127.0.0.1:8001"}
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, s *serveOptions)
		wantErr error
	}{
		{name: "cluster node", args: append(base, "--data-dir", "d", "--raft-addr", "127.0.0.1:7001", "--join", "127.0.0.1:8002,127.0.0.1:8003", "--pki", "certs", "--election-timeout", "150ms"),
			check: func(t *testing.T, s *serveOptions) {
				require.Equal(t, "n1", s.node)
				require.Equal(t, "127.0.0.1:8002,127.0.0.1:8003", s.join)
				require.Equal(t, 150*time.Millisecond, s.electionTimeout)
				require.Equal(t, "certs", s.pkiDir)
			}},
		{name: "files", args: append(base, "--ca", "ca.crt", "--cert", "n1.crt", "--key", "n1.key", "--raft-addr", "127.0.0.1:7001", "--bootstrap", "--token-file", "tok")},
		{name: "limits", args: append(base, "--pki", "certs", "--raft-addr", "127.0.0.1:7001", "--bootstrap", "--session-idle-timeout", "90s", "--message-timeout", "5s",
			"--handshake-timeout", "3s", "--idle-timeout", "1m", "--max-sessions", "10", "--max-sessions-per-identity", "2", "--max-archive-uploads", "3",
			"--max-archive-uploads-per-identity", "2", "--upload-timeout", "45s", "--max-token-guesses-per-address", "4", "--max-token-guesses", "40"),
			check: func(t *testing.T, s *serveOptions) {
				require.Equal(t, server.Limits{HandshakeTimeout: 3 * time.Second, IdleTimeout: time.Minute, SessionIdleTimeout: 90 * time.Second,
					MessageTimeout: 5 * time.Second, MaxSessionsPerIdentity: 2, UploadTimeout: 45 * time.Second,
					TokenGuessesPerAddress: 4, TokenGuesses: 40}, s.limits)
				require.Equal(t, 10, s.maxSessions)
				require.Equal(t, 3, s.maxArchiveUploads)
				require.Equal(t, 2, s.maxUploadsPerID)
			}},
		{name: "default limits", args: append(base, "--pki", "certs", "--raft-addr", "127.0.0.1:7001", "--bootstrap"),
			check: func(t *testing.T, s *serveOptions) {
				require.Equal(t, server.Limits{HandshakeTimeout: server.DefaultHandshakeTimeout, IdleTimeout: server.DefaultIdleTimeout,
					SessionIdleTimeout: server.DefaultSessionIdleTimeout, MessageTimeout: server.DefaultMessageTimeout,
					MaxSessionsPerIdentity: server.DefaultMaxSessionsPerIdentity, UploadTimeout: server.DefaultUploadTimeout,
					TokenGuessesPerAddress: server.DefaultTokenGuessesPerAddress, TokenGuesses: server.DefaultTokenGuesses}, s.limits)
				require.Equal(t, server.DefaultMaxSessions, s.maxSessions)
				require.Equal(t, server.DefaultMaxArchiveUploads, s.maxArchiveUploads)
				require.Equal(t, server.DefaultMaxArchiveUploadsPerIdentity, s.maxUploadsPerID)
			}},
		{name: "transaction limits", args: append(base, "--pki", "certs", "--raft-addr", "127.0.0.1:7001", "--bootstrap",
			"--max-transaction-steps", "3", "--max-transaction-bytes", "100", "--transaction-idle-timeout", "90s"),
			check: func(t *testing.T, s *serveOptions) {
				require.Equal(t, session.Options{MaxTransactionSteps: 3, MaxTransactionBytes: 100, TransactionIdleTimeout: 90 * time.Second}, s.transactions)
			}},
		{name: "default transaction limits", args: append(base, "--pki", "certs", "--raft-addr", "127.0.0.1:7001", "--bootstrap"),
			check: func(t *testing.T, s *serveOptions) {
				require.Equal(t, session.Options{MaxTransactionSteps: session.DefaultMaxTransactionSteps, MaxTransactionBytes: session.DefaultMaxTransactionBytes,
					TransactionIdleTimeout: session.DefaultTransactionIdleTimeout}, s.transactions)
			}},
		{name: "zero transaction steps", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--max-transaction-steps", "0"), wantErr: ErrUsage},
		{name: "negative transaction bytes", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--max-transaction-bytes", "-1"), wantErr: ErrUsage},
		{name: "zero transaction idle timeout", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--transaction-idle-timeout", "0s"), wantErr: ErrUsage},
		{name: "zero session idle timeout", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--session-idle-timeout", "0s"), wantErr: ErrUsage},
		{name: "negative message timeout", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--message-timeout", "-1s"), wantErr: ErrUsage},
		{name: "zero archive uploads", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--max-archive-uploads", "0"), wantErr: ErrUsage},
		{name: "zero archive uploads per identity", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--max-archive-uploads-per-identity", "0"), wantErr: ErrUsage},
		{name: "zero upload timeout", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--upload-timeout", "0s"), wantErr: ErrUsage},
		{name: "zero token guesses per address", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--max-token-guesses-per-address", "0"), wantErr: ErrUsage},
		{name: "negative token guesses", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--max-token-guesses", "-1"), wantErr: ErrUsage},
		{name: "zero identity share", args: append(base, "--pki", "c", "--raft-addr", "127.0.0.1:7001", "--max-sessions-per-identity", "0"), wantErr: ErrUsage},
		{name: "no raft address", args: append(base, "--pki", "certs", "--bootstrap"), wantErr: ErrUsage},
		{name: "insecure with a raft address", args: append(base, "--insecure", "--raft-addr", "127.0.0.1:7001"), wantErr: ErrUsage},
		{name: "insecure joining", args: append(base, "--insecure", "--join", "127.0.0.1:8002"), wantErr: ErrUsage},
		{name: "insecure bootstrapping", args: append(base, "--insecure", "--bootstrap"), wantErr: ErrUsage},
		{name: "insecure on loopback", args: append(base, "--insecure")},
		{name: "insecure on localhost", args: []string{"serve", "--node", "n1", "--api-addr", "localhost:1", "--insecure"}},
		{name: "insecure off loopback", args: []string{"serve", "--node", "n1", "--api-addr", "0.0.0.0:8001", "--insecure"}, wantErr: ErrUsage},
		{name: "insecure with certificates", args: append(base, "--insecure", "--pki", "certs"), wantErr: ErrUsage},
		{name: "no TLS material", args: base, wantErr: ErrUsage},
		{name: "no node", args: []string{"serve", "--api-addr", "127.0.0.1:1", "--insecure"}, wantErr: ErrUsage},
		{name: "bad node name", args: []string{"serve", "--node", "n_1", "--api-addr", "127.0.0.1:1", "--insecure"}, wantErr: ErrUsage},
		{name: "no api address", args: []string{"serve", "--node", "n1", "--insecure"}, wantErr: ErrUsage},
		{name: "pki and files", args: append(base, "--pki", "certs", "--cert", "x"), wantErr: ErrUsage},
		{name: "cert without key", args: append(base, "--ca", "ca", "--cert", "x"), wantErr: ErrUsage},
		{name: "bootstrap and join", args: append(base, "--pki", "c", "--bootstrap", "--join", "127.0.0.1:1"), wantErr: ErrUsage},
		{name: "stray argument", args: append(base, "--pki", "c", "extra"), wantErr: ErrUsage},
		{name: "help", args: []string{"serve", "--help"}, wantErr: flag.ErrHelp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseArgs(tt.args)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, o.serve)
			if tt.check != nil {
				tt.check(t, o.serve)
			}
		})
	}
}

func TestParseRemoteArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, o options)
		wantErr error
	}{
		{name: "connect survives the clock subcommand", args: []string{"--connect", "https://a:1", "--ca", "ca.crt", "clock", "--domain", "prod"},
			check: func(t *testing.T, o options) {
				require.Equal(t, "https://a:1", o.remote.connect)
				require.Equal(t, "ca.crt", o.remote.ca)
				require.True(t, o.clock)
			}},
		{name: "connect after the subcommand", args: []string{"clock", "--connect", "https://a:1", "--token-file", "t"},
			check: func(t *testing.T, o options) {
				require.Equal(t, "https://a:1", o.remote.connect)
				require.Equal(t, "t", o.remote.tokenFile)
			}},
		{name: "leave", args: []string{"--connect", "https://a:1", "leave"}, check: func(t *testing.T, o options) {
			require.Equal(t, &adminCommand{name: "leave"}, o.admin)
		}},
		{name: "remove", args: []string{"remove", "--connect", "https://a:1", "--cert", "c", "n2"}, check: func(t *testing.T, o options) {
			require.Equal(t, &adminCommand{name: "remove", node: "n2"}, o.admin)
			require.Equal(t, "c", o.remote.cert)
		}},
		{name: "remove --force", args: []string{"--connect", "https://a:1", "remove", "--force", "n2"}, check: func(t *testing.T, o options) {
			require.Equal(t, &adminCommand{name: "remove", node: "n2", force: true}, o.admin)
		}},
		{name: "leave --force", args: []string{"--connect", "https://a:1", "leave", "--force"}, wantErr: ErrUsage},
		{name: "leave with an argument", args: []string{"--connect", "https://a:1", "leave", "n1"}, wantErr: ErrUsage},
		{name: "remove without a node", args: []string{"--connect", "https://a:1", "remove"}, wantErr: ErrUsage},
		{name: "remove two nodes", args: []string{"--connect", "https://a:1", "remove", "n1", "n2"}, wantErr: ErrUsage},
		{name: "remove a bad name", args: []string{"--connect", "https://a:1", "remove", "-x-"}, wantErr: ErrUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseArgs(tt.args)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, o)
		})
	}
}

func TestClientTLSFlags(t *testing.T) {
	for _, tt := range []struct {
		o       remoteOptions
		wantErr error
	}{
		{o: remoteOptions{cert: "c"}, wantErr: ErrUsage},
		{o: remoteOptions{key: "k"}, wantErr: ErrUsage},
		{o: remoteOptions{cert: "c", key: "k"}, wantErr: ErrUsage},
		{o: remoteOptions{ca: "missing.crt", cert: "c", key: "k"}, wantErr: ErrIO},
		{o: remoteOptions{ca: "missing.crt"}, wantErr: ErrIO},
		{o: remoteOptions{}},
	} {
		tc, err := clientTLS(tt.o)
		if tt.wantErr != nil {
			require.ErrorIs(t, err, tt.wantErr, "%+v", tt.o)
			continue
		}
		require.NoError(t, err)
		require.Nil(t, tc)
	}
	m := &Main{Stderr: io.Discard}
	_, err := m.clientConfig(remoteOptions{connect: "http://127.0.0.1:1", tokenFile: "missing-token"}, false)
	require.ErrorIs(t, err, ErrIO)
	_, _, _, err = m.openSession(context.Background(), options{remote: remoteOptions{connect: "http://127.0.0.1:1"}, dataDir: "d"})
	require.ErrorIs(t, err, ErrUsage, "--data-dir belongs to an embedded node")
}

// TestRemoteShellLoop runs the interactive shell on a remote client: the
// prompt follows the remote session's active domain and transaction, and
// clock frames arrive above it.
func TestRemoteShellLoop(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	n, err := node.Open(context.Background(), node.Config{Logger: logger, RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	srv, err := server.New(server.Config{Node: n, Insecure: true, Logger: logger})
	require.NoError(t, err)
	ln, err := srv.Listen("127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = srv.Serve(ln)
	}()
	c, err := client.Dial(context.Background(), client.Config{URLs: []string{"http://" + ln.Addr().String()}, Logger: logger})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, c.Close())
		require.NoError(t, srv.Close())
		wg.Wait()
		require.NoError(t, n.Close())
	})

	ed := &scriptedEditor{lines: make(chan keyedLine), out: newLineSink()}
	errOut := newLineSink()
	sh := &shell{sess: c, editor: ed, stderr: errOut,
		run: &runner{exec: c, stdout: ed.out, stderr: errOut, format: formatTable, outMu: new(sync.Mutex)}}
	done := make(chan error, 1)
	go func() { done <- sh.loop(context.Background()) }()
	send := func(text string) { ed.lines <- keyedLine{text: text} }

	require.Equal(t, "nspl> ", sh.prompt())
	send("CREATE PACED DOMAIN prod WITH PERIOD 100ms SKEW 10ms;")
	ed.out.waitLine(t, "created domain 'prod'")
	send("USE prod; START AT '2030-01-01T00:00:00Z' TIME RATE 1000;")
	ed.out.waitLine(t, "started domain 'prod'")
	require.Equal(t, "nspl[prod]> ", sh.prompt())
	send("ATTACH DOMAIN CLOCK;")
	ed.out.waitLine(t, "[clock prod] tick ")
	send("  USE nope;")
	errOut.waitLine(t, "1:3: error: domain 'nope' does not exist")
	send("DETACH DOMAIN CLOCK; BEGIN; STOP;")
	ed.out.waitLine(t, "queued STOP")
	require.Equal(t, "nspl[prod]*> ", sh.prompt())
	names, err := c.DomainNames(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"prod"}, names)
	send("exit")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(expectTimeout):
		t.Fatal("the shell did not exit")
	}
	require.False(t, errors.Is(err, ErrIO))
}

// TestServeRefusesFlagsThatCannotStartAMember runs nspl serve with valid
// certificates but nothing to start from: an empty data directory with
// neither --bootstrap nor --join is a usage error (exit 2), not an I/O one.
func TestServeRefusesFlagsThatCannotStartAMember(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	for _, args := range [][]string{{"cert", "ca", "--dir", certs}, {"cert", "node", "n1", "--dir", certs}} {
		require.NoError(t, Run(context.Background(), args, strings.NewReader(""), io.Discard, io.Discard))
	}
	var stderr strings.Builder
	err := Run(context.Background(), []string{"serve", "--node", "n1", "--pki", certs, "--data-dir", filepath.Join(dir, "n1"),
		"--raft-addr", "127.0.0.1:0", "--api-addr", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, &stderr)
	require.ErrorIs(t, err, ErrUsage)
	require.Equal(t, ExitUsage, ExitCode(err))
	require.ErrorContains(t, err, "pass --bootstrap for the first node or --join")
}

// TestClientNoticesFollowTheShell routes the remote client's notices above
// the shell's prompt while the shell runs, and to stderr otherwise.
func TestClientNoticesFollowTheShell(t *testing.T) {
	var stderr strings.Builder
	m := &Main{Stderr: &stderr}
	cfg, err := m.clientConfig(remoteOptions{connect: "http://127.0.0.1:1"}, false)
	require.NoError(t, err)
	cfg.Notify(client.Notice{Kind: client.Reconnected, Node: "n1"})
	require.Equal(t, "nspl: reconnected to node 'n1'\n", stderr.String())

	var above []string
	restore := m.setNoticePrinter(func(line string) { above = append(above, line) })
	cfg.Notify(client.Notice{Kind: client.Restored, Domain: "prod", Node: "n2"})
	require.Equal(t, []string{"nspl: clock of domain 'prod' attached again"}, above, "printed above the prompt")
	require.Equal(t, "nspl: reconnected to node 'n1'\n", stderr.String(), "not written under the line being edited")
	restore()
	cfg.Notify(client.Notice{Kind: client.Reconnected, Node: "n3"})
	require.Len(t, above, 1)
	require.Contains(t, stderr.String(), "reconnected to node 'n3'")
}
