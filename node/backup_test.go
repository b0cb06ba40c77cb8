package node

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// sourceCatalog builds the catalog every round trip backs up, on a node at
// t0: "prod" paced and running at generation 2 (START AT an hour before t0,
// rate 60) with a tick accepted, "batch" paced and stopped at generation 1,
// "web" unpaced and running, "idle" never started.
func sourceCatalog(t *testing.T, fake *timesource.Fake) *Node {
	t.Helper()
	ctx := context.Background()
	n := openNode(t, fake, "")
	p := paced("prod", time.Second, 100*time.Millisecond)
	p.Placement = lifecycle.PreferColocation
	for _, c := range []lifecycle.CreateDomain{p, paced("batch", 250*time.Millisecond, 0),
		{Name: "web", Pace: lifecycle.Unpaced, Placement: lifecycle.SuggestSeparation}, {Name: "idle", Pace: lifecycle.Unpaced}} {
		_, err := n.CreateDomain(ctx, c)
		require.NoError(t, err)
	}
	_, err := n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	_, err = n.Stop(ctx, "prod")
	require.NoError(t, err)
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtTime, At: t0 - int64(time.Hour), Rate: 60}.Request())
	require.NoError(t, err)
	_, err = n.Start(ctx, "batch", planner.Start{Mode: planner.StartAtNow, Rate: 2}.Request())
	require.NoError(t, err)
	_, err = n.Stop(ctx, "batch")
	require.NoError(t, err)
	_, err = n.Start(ctx, "web", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	waitTick(t, n, "prod", 1)
	return n
}

func backupPath(t *testing.T) string { return filepath.Join(t.TempDir(), "cluster.nsplbak") }

// written is an archive a test captured and the file it wrote it to.
type written struct {
	Path    string
	Archive backup.Archive
}

// backupTo captures scope and writes it to path, as a session's BACKUP
// does.
func backupTo(_ context.Context, n *Node, scope BackupScope, path string) (written, error) {
	a, err := n.Capture(scope)
	if err != nil {
		return written{}, err
	}
	dest, _, err := backup.Write(path, a, backup.WriteOptions{})
	return written{Path: dest, Archive: a}, err
}

// restoreFrom reads and verifies the archive at p.Path, then restores it,
// as a session's RESTORE does.
func restoreFrom(ctx context.Context, n *Node, p planner.Restore) (RestorePlan, error) {
	path, a, err := backup.Read(p.Path)
	if err != nil {
		return RestorePlan{}, err
	}
	return n.Restore(ctx, backup.RestoreRequest{
		Cluster: p.Cluster, Domain: p.Domain, Target: p.Target(), Resume: p.Resume, DryRun: p.DryRun,
	}, path, a)
}

func TestBackupCapturesCatalog(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := sourceCatalog(t, fake)
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()
	path := backupPath(t)

	rep, err := backupTo(ctx, n, BackupScope{Cluster: true}, path)
	require.NoError(t, err)
	require.Equal(t, path, rep.Path)
	require.Equal(t, []string{"batch", "idle", "prod", "web"}, rep.Archive.Names())
	require.Equal(t, t0, rep.Archive.CapturedAt)
	require.Equal(t, n.catalog.State().Revision(), rep.Archive.CatalogRevision)
	_, read, err := backup.Read(path)
	require.NoError(t, err)
	require.Equal(t, rep.Archive, read)

	prod, _ := read.Find("prod")
	live, err := n.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, live, prod.Record)
	require.Equal(t, uint64(2), prod.Record.Generation)
	want, err := live.Mapping.Project(t0)
	require.NoError(t, err)
	require.Equal(t, &want, prod.LogicalNow, "the reading at capture is the mapping's projection of the capture time")
	tick := n.registry.Progress("prod")
	require.Equal(t, &backup.Frontier{Generation: 2, TickID: tick.ID, Boundary: tick.Boundary, AuthorityUTC: tick.AuthorityUTC}, prod.Frontier)
	web, _ := read.Find("web")
	require.Equal(t, ptrTo(t0), web.LogicalNow)
	require.Nil(t, web.Frontier)
	batch, _ := read.Find("batch")
	require.Nil(t, batch.LogicalNow)
	require.Nil(t, batch.Frontier)

	one, err := backupTo(ctx, n, BackupScope{Domain: "web"}, path)
	require.NoError(t, err)
	require.Equal(t, backup.ScopeDomain, one.Archive.Scope)
	require.Equal(t, []string{"web"}, one.Archive.Names())

	before := n.catalog.State().Revision()
	_, err = backupTo(ctx, n, BackupScope{Domain: "nope"}, path)
	require.ErrorIs(t, err, lifecycle.ErrDomainNotFound)
	require.Equal(t, before, n.catalog.State().Revision(), "a backup never changes the catalog")
}

func ptrTo[T any](v T) *T { return &v }

func TestRestoreResumeAfterDowntime(t *testing.T) {
	src := timesource.NewFake(t0)
	a := sourceCatalog(t, src)
	path := backupPath(t)
	rep, err := backupTo(context.Background(), a, BackupScope{Cluster: true}, path)
	require.NoError(t, err)
	archived := a.Identity()
	require.NoError(t, a.Close())
	prodArchived, _ := rep.Archive.Find("prod")

	// Two hours of downtime later, a fresh node restores the archive.
	downtime := 2 * time.Hour
	fake := timesource.NewFake(t0 + int64(downtime))
	var log reportLog
	ctx := context.Background()
	b, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake, OnProgress: log.add})
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	require.NoError(t, b.WaitInstalled(ctx))
	revBefore := b.catalog.State().Revision()

	plan, err := restoreFrom(ctx, b, planner.Restore{Cluster: true, Path: path, Resume: true})
	require.NoError(t, err)
	require.Equal(t, revBefore+1, plan.Revision, "one catalog command restores every domain")
	require.Len(t, plan.Domains, 4)

	prod, err := b.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Running, prod.Status)
	require.Equal(t, prodArchived.Record.Generation, prod.Generation, "the archived generation is kept")
	require.Equal(t, prodArchived.Record.LastStart, prod.LastStart)
	require.Equal(t, *prodArchived.Record.Mapping, *prod.Mapping, "the mapping is kept verbatim")
	require.Equal(t, lifecycle.PreferColocation, prod.Placement)
	require.Equal(t, prodArchived.Record.Period, prod.Period)
	require.Equal(t, prodArchived.Record.Skew, prod.Skew)
	require.Equal(t, b.Identity(), prod.Authority.Identity(), "the authority is chosen from this cluster's live voters")
	require.NotEqual(t, archived, prod.Authority.Identity(), "the archived authority is never reused")
	require.Equal(t, prodArchived.Record.Authority.Revision+1, prod.Authority.Revision)

	// The clock reads the archived mapping's projection of now: the
	// downtime advanced it.
	h, err := b.registry.Bind("prod")
	require.NoError(t, err)
	require.Equal(t, prod.Generation, h.Generation())
	now, err := h.Now()
	require.NoError(t, err)
	want, err := prodArchived.Record.Mapping.Project(fake.Now())
	require.NoError(t, err)
	require.Equal(t, want, now)
	require.Equal(t, *prodArchived.LogicalNow+int64(downtime)*60, now, "two hours at rate 60 advanced the clock by 120 hours")

	// The producer reconstructs the frontier from the unchanged mapping;
	// every tick belongs to the archived generation.
	id, boundary, err := clock.LatestDueTick(prod.LastStart.LogicalStart, prod.Period, now)
	require.NoError(t, err)
	obs := waitTick(t, b, "prod", id)
	require.Equal(t, clockrt.Tick{Generation: prod.Generation, ID: id, Boundary: boundary, AuthorityUTC: fake.Now()}, obs.Tick)
	require.Greater(t, id, prodArchived.Frontier.TickID)
	// At rate 60 the next tick is due one period of domain time, a
	// sixtieth of a second, after the one just emitted.
	spacing, err := prod.Mapping.WaitDelta(prod.Period)
	require.NoError(t, err)
	parked(t, fake, time.Duration(spacing))
	fake.Advance(time.Second)
	waitTick(t, b, "prod", id+60)
	reps := log.all()
	require.NotEmpty(t, reps)
	for _, r := range reps {
		require.Equal(t, prod.Generation, r.Generation, "no tick of another generation appears")
		require.Equal(t, prod.Authority, r.Authority)
	}

	web, err := b.Domain("web")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Running, web.Status)
	require.Equal(t, uint64(1), web.Generation)
	wh, err := b.registry.Bind("web")
	require.NoError(t, err)
	webNow, err := wh.Now()
	require.NoError(t, err)
	require.Equal(t, fake.Now(), webNow, "an unpaced domain resumes on actual UTC")

	batch, err := b.Domain("batch")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Stopped, batch.Status, "RESUME keeps a stopped domain stopped")
	require.Equal(t, uint64(1), batch.Generation)
	idle, err := b.Domain("idle")
	require.NoError(t, err)
	require.Equal(t, uint64(0), idle.Generation)
}

func TestRestoreDefaultIsStopped(t *testing.T) {
	src := timesource.NewFake(t0)
	a := sourceCatalog(t, src)
	path := backupPath(t)
	_, err := backupTo(context.Background(), a, BackupScope{Domain: "prod"}, path)
	require.NoError(t, err)
	require.NoError(t, a.Close())

	fake := timesource.NewFake(t0 + int64(time.Hour))
	b := openNode(t, fake, "")
	defer func() { require.NoError(t, b.Close()) }()
	ctx := context.Background()

	plan, err := restoreFrom(ctx, b, planner.Restore{Domain: "prod", Path: path})
	require.NoError(t, err)
	require.Equal(t, "prod", plan.Domains[0].Source)
	d, err := b.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Stopped, d.Status)
	require.Nil(t, d.Mapping, "a default restore installs no mapping")
	require.False(t, d.Authority.Assigned())
	require.Equal(t, uint64(2), d.Generation)
	require.Equal(t, clockrt.StateStopped, b.registry.Current("prod").State())
	_, err = b.registry.Bind("prod")
	require.Error(t, err, "a stopped clock cannot be read")

	out, err := b.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	require.Equal(t, uint64(3), out.Domain.Generation, "START makes generation + 1")
	require.Equal(t, fake.Now(), out.Domain.Mapping.WallStartedAt)
	waitTick(t, b, "prod", 1)
	require.Equal(t, uint64(3), b.registry.Progress("prod").Generation)
}

func TestRestoreNamesAndDryRun(t *testing.T) {
	src := timesource.NewFake(t0)
	a := sourceCatalog(t, src)
	path := backupPath(t)
	_, err := backupTo(context.Background(), a, BackupScope{Cluster: true}, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Close()) }()
	ctx := context.Background()
	rev := func() uint64 { return a.catalog.State().Revision() }

	// Every name exists on the source: each restore is refused whole.
	before := rev()
	_, err = restoreFrom(ctx, a, planner.Restore{Cluster: true, Path: path})
	require.ErrorIs(t, err, lifecycle.ErrDomainExists)
	_, err = restoreFrom(ctx, a, planner.Restore{Domain: "prod", Path: path, Resume: true})
	require.ErrorIs(t, err, lifecycle.ErrDomainExists)
	require.ErrorContains(t, err, "AS <new_name>")
	_, err = restoreFrom(ctx, a, planner.Restore{Domain: "prod", As: "web", Path: path})
	require.ErrorIs(t, err, lifecycle.ErrDomainExists)
	_, err = restoreFrom(ctx, a, planner.Restore{Domain: "ghost", Path: path})
	require.ErrorIs(t, err, ErrNotInArchive)
	require.ErrorContains(t, err, "'batch', 'idle', 'prod', 'web'")
	require.Equal(t, before, rev())

	// A dry run plans and changes nothing.
	plan, err := restoreFrom(ctx, a, planner.Restore{Domain: "prod", As: "rehearsal", Path: path, Resume: true, DryRun: true})
	require.NoError(t, err)
	require.True(t, plan.DryRun)
	require.Equal(t, before, plan.Revision)
	require.Equal(t, "rehearsal", plan.Domains[0].Domain.Name)
	require.Equal(t, lifecycle.Running, plan.Domains[0].Domain.Status)
	require.Equal(t, a.Identity(), plan.Domains[0].Domain.Authority.Identity())
	require.Equal(t, before, rev())
	_, err = a.Domain("rehearsal")
	require.ErrorIs(t, err, lifecycle.ErrDomainNotFound)

	// AS gives a free name: the copy runs beside the original on the same
	// mapping and generation.
	plan, err = restoreFrom(ctx, a, planner.Restore{Domain: "prod", As: "rehearsal", Path: path, Resume: true})
	require.NoError(t, err)
	require.Equal(t, before+1, plan.Revision)
	orig, _ := a.Domain("prod")
	copyD, err := a.Domain("rehearsal")
	require.NoError(t, err)
	require.Equal(t, orig.Generation, copyD.Generation)
	require.Equal(t, *orig.Mapping, *copyD.Mapping)
	waitTick(t, a, "rehearsal", 1)
}

// forgeArchive writes an archive whose every length and digest is right,
// from raw manifest fields and domain sections, so a test can hand a node
// what Encode refuses to write.
func forgeArchive(t *testing.T, path string, version int, sections ...map[string]any) {
	t.Helper()
	var bodies [][]byte
	var list []map[string]any
	for i, s := range sections {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		bodies = append(bodies, b)
		list = append(list, map[string]any{"name": fmt.Sprintf("domains/%04d.json", i+1), "length": len(b), "sha256": hex.EncodeToString(sum[:])})
	}
	manifest, err := json.Marshal(map[string]any{"format": "nspl-backup", "version": version, "captured_at": t0,
		"captured_at_text": "2026-01-01T00:00:00Z", "scope": "cluster", "node": "x", "catalog_revision": 9, "sections": list})
	require.NoError(t, err)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	put := func(name string, body []byte) {
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "nspl-backup/" + name, Mode: 0o600, Size: int64(len(body)), ModTime: time.Unix(0, t0), Format: tar.FormatUSTAR}))
		_, err := tw.Write(body)
		require.NoError(t, err)
	}
	put("manifest.json", manifest)
	for i, b := range bodies {
		put(fmt.Sprintf("domains/%04d.json", i+1), b)
	}
	require.NoError(t, tw.Flush())
	sum := sha256.Sum256(buf.Bytes())
	trailer, err := json.Marshal(map[string]any{"length": buf.Len(), "sha256": hex.EncodeToString(sum[:])})
	require.NoError(t, err)
	put("trailer.json", trailer)
	require.NoError(t, tw.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
}

func pacedRunningSection(withMapping bool) map[string]any {
	sp := map[string]any{"mode": "at", "logical_start": t0, "time_rate": 60, "wall_started_at": t0}
	s := map[string]any{"name": "prod", "pace": "PACED", "period_ns": int64(time.Second), "skew_ns": 0, "placement": "NEUTRAL",
		"status": "running", "generation": 3, "start_point": sp, "mapping": nil,
		"authority": map[string]any{"node": "old", "incarnation": 5, "revision": 3}, "revision": 9, "frontier": nil, "logical_now": nil}
	if withMapping {
		s["mapping"] = map[string]any{"wall_started_at": t0, "logical_start": t0, "time_rate": 60}
	}
	return s
}

func TestRestoreRefusesDamagedArchives(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()
	_, err := n.CreateDomain(ctx, lifecycle.CreateDomain{Name: "keep", Pace: lifecycle.Unpaced})
	require.NoError(t, err)

	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	forgeArchive(t, good, 1, pacedRunningSection(true))
	valid, err := os.ReadFile(good)
	require.NoError(t, err)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	flipped := bytes.Clone(valid)
	flipped[512+40] ^= 0x01 // inside the manifest
	wrongDigest := bytes.Clone(valid)
	i := bytes.LastIndex(wrongDigest, []byte(`"sha256":"`)) + len(`"sha256":"`)
	copy(wrongDigest[i:], bytes.Repeat([]byte("0"), 64))
	missing := filepath.Join(dir, "missing")
	forgeArchive(t, missing, 1, pacedRunningSection(false))
	future := filepath.Join(dir, "future")
	forgeArchive(t, future, 2, pacedRunningSection(true))

	for _, tc := range []struct {
		name  string
		path  string
		err   error
		check string
	}{
		{"flipped byte", write("flipped", flipped), backup.ErrCorrupt, "sha256"},
		{"truncated file", write("truncated", valid[:len(valid)-700]), backup.ErrCorrupt, "structure"},
		{"wrong digest", write("digest", wrongDigest), backup.ErrCorrupt, "sha256"},
		{"missing mapping on a paced running domain", missing, backup.ErrMissingMapping, "mapping"},
		{"future format version", future, backup.ErrUnsupportedVersion, "version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := n.catalog.State()
			for _, p := range []planner.Restore{
				{Cluster: true, Path: tc.path, Resume: true},
				{Domain: "prod", As: "copy", Path: tc.path},
				{Domain: "prod", Path: tc.path, DryRun: true},
			} {
				_, err := restoreFrom(ctx, n, p)
				require.ErrorIs(t, err, tc.err, p.String())
				var ce *backup.CheckError
				require.ErrorAs(t, err, &ce)
				require.Equal(t, tc.check, ce.Check, "%v", err)
				require.Equal(t, tc.path, ce.Path)
			}
			after := n.catalog.State()
			require.Equal(t, before.Revision(), after.Revision(), "nothing changed")
			require.Equal(t, before.Domains(), after.Domains())
		})
	}

	// The intact forged archive restores, with this node as its authority.
	plan, err := restoreFrom(ctx, n, planner.Restore{Cluster: true, Path: good, Resume: true})
	require.NoError(t, err)
	require.Equal(t, n.Identity(), plan.Domains[0].Domain.Authority.Identity())
	require.Equal(t, uint64(4), plan.Domains[0].Domain.Authority.Revision)
}

func TestRestoreWithoutVoterRefused(t *testing.T) {
	fake := timesource.NewFake(t0)
	ctx := context.Background()
	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake,
		Available: func(*lifecycle.State) []lifecycle.NodeIncarnation { return nil }})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()
	path := filepath.Join(t.TempDir(), "p")
	forgeArchive(t, path, 1, pacedRunningSection(true))
	before := n.catalog.State().Revision()
	_, err = restoreFrom(ctx, n, planner.Restore{Cluster: true, Path: path, Resume: true})
	require.ErrorIs(t, err, lifecycle.ErrNoLiveVoter)
	require.Equal(t, before, n.catalog.State().Revision())
	// Without RESUME no authority is needed.
	_, err = restoreFrom(ctx, n, planner.Restore{Cluster: true, Path: path})
	require.NoError(t, err)
}

// A restore commits through the control-plane handler's commit path, as
// every other statement does: on a follower it reaches the leader through
// Config.Forward, and Config.OnCommit sees its latency. A dry run commits
// nothing.
func TestRestoreCommitsThroughHandler(t *testing.T) {
	src := timesource.NewFake(t0)
	a := sourceCatalog(t, src)
	path := backupPath(t)
	_, err := backupTo(context.Background(), a, BackupScope{Domain: "prod"}, path)
	require.NoError(t, err)
	require.NoError(t, a.Close())

	var commits atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: timesource.NewFake(t0),
		OnCommit: func(time.Duration) { commits.Add(1) }})
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()

	_, err = restoreFrom(ctx, b, planner.Restore{Domain: "prod", Path: path, DryRun: true})
	require.NoError(t, err)
	require.Zero(t, commits.Load(), "a dry run commits nothing")
	_, err = restoreFrom(ctx, b, planner.Restore{Domain: "prod", Path: path})
	require.NoError(t, err)
	require.Equal(t, int64(1), commits.Load(), "the restore's commit is the handler's")
}
