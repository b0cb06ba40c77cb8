package backup

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/lifecycle"
)

// t0 is 2026-01-01T00:00:00Z.
const t0 = int64(1767225600) * int64(time.Second)

func ptr[T any](v T) *T { return &v }

func pacedRunning(name string, rate float64) Domain {
	sp := lifecycle.StartPoint{Mode: lifecycle.StartAt, LogicalStart: t0 - 5*int64(time.Hour), Rate: rate, WallStartedAt: t0}
	m := sp.Mapping()
	return Domain{
		Record: lifecycle.Domain{Name: name, Pace: lifecycle.Paced, Period: uint64(time.Second), Skew: uint64(100 * time.Millisecond),
			Placement: lifecycle.PreferColocation, Status: lifecycle.Running, Generation: 3, LastStart: sp, Mapping: &m,
			Authority: lifecycle.AuthorityFence{Node: "a", Incarnation: 7, Revision: 5}, Revision: 9},
		Frontier:   &Frontier{Generation: 3, TickID: 12, Boundary: sp.LogicalStart + 11*int64(time.Second), AuthorityUTC: t0 + 1},
		LogicalNow: ptr(sp.LogicalStart + 12*int64(time.Second)),
	}
}

func pacedStopped(name string) Domain {
	return Domain{Record: lifecycle.Domain{Name: name, Pace: lifecycle.Paced, Period: uint64(time.Millisecond), Skew: 0,
		Status: lifecycle.Stopped, Generation: 2,
		LastStart: lifecycle.StartPoint{Mode: lifecycle.StartNow, LogicalStart: t0, Rate: 1, WallStartedAt: t0},
		Authority: lifecycle.AuthorityFence{Revision: 4}, Revision: 6}}
}

func unpacedRunning(name string) Domain {
	return Domain{Record: lifecycle.Domain{Name: name, Pace: lifecycle.Unpaced, Placement: lifecycle.SuggestSeparation,
		Status: lifecycle.Running, Generation: 1,
		LastStart: lifecycle.StartPoint{Mode: lifecycle.StartResume, LogicalStart: t0, Rate: 1, WallStartedAt: t0}, Revision: 2},
		LogicalNow: ptr(t0)}
}

func neverStarted(name string) Domain {
	return Domain{Record: lifecycle.Domain{Name: name, Pace: lifecycle.Unpaced, Revision: 1}}
}

func cluster(domains ...Domain) Archive {
	return Archive{Version: Version, CapturedAt: t0 + 42, Scope: ScopeCluster, Node: "local", CatalogRevision: 11, Domains: domains}
}

var roundTrips = []struct {
	name string
	a    Archive
}{
	{"empty cluster", cluster()},
	{"every kind", cluster(unpacedRunning("web"), pacedRunning("prod", 60), pacedStopped("batch"), neverStarted("idle"))},
	{"domain scope", Archive{Version: Version, CapturedAt: -1, Scope: ScopeDomain, Node: "n", Domains: []Domain{pacedRunning("prod", 1)}}},
	{"smallest rate", cluster(pacedRunning("slow", 5e-324))},
	{"largest rate", cluster(pacedRunning("fast", math.MaxFloat64))},
	{"odd rate", cluster(pacedRunning("odd", 0.1+0.2))},
	{"keyword and symbol names", cluster(neverStarted("clock"), neverStarted("a-b~c_d"))},
	{"extreme capture time", Archive{Version: Version, CapturedAt: math.MinInt64, Scope: ScopeCluster, Domains: []Domain{neverStarted("x")}}},
	{"latest capture time", Archive{Version: Version, CapturedAt: math.MaxInt64, Scope: ScopeCluster, Domains: []Domain{neverStarted("x")}}},
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range roundTrips {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Encode(tc.a)
			require.NoError(t, err)
			again, err := Encode(tc.a)
			require.NoError(t, err)
			require.Equal(t, b, again, "equal archives encode to equal bytes")
			got, err := Decode(b)
			require.NoError(t, err)
			want := tc.a
			if want.Domains == nil {
				want.Domains = []Domain{}
			}
			// Decode returns domains sorted by name.
			sorted := slices.Clone(want.Domains)
			for i := range sorted {
				for j := i + 1; j < len(sorted); j++ {
					if sorted[j].Record.Name < sorted[i].Record.Name {
						sorted[i], sorted[j] = sorted[j], sorted[i]
					}
				}
			}
			want.Domains = sorted
			require.Equal(t, want, got)
		})
	}
}

// TestListableByTar checks the archive is a plain ustar stream with the
// documented entries, in order, each mode 0600.
func TestListableByTar(t *testing.T) {
	b, err := Encode(cluster(pacedRunning("prod", 60), unpacedRunning("web")))
	require.NoError(t, err)
	tr := tar.NewReader(bytes.NewReader(b))
	var names []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Equal(t, int64(0o600), hdr.Mode)
		require.Equal(t, byte(tar.TypeReg), hdr.Typeflag)
		names = append(names, hdr.Name)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		require.True(t, json.Valid(body), "%s is JSON", hdr.Name)
	}
	require.Equal(t, []string{"nspl-backup/manifest.json", "nspl-backup/domains/0001.json", "nspl-backup/domains/0002.json", "nspl-backup/trailer.json"}, names)
}

// TestEveryFlippedByteRefused flips each byte of an archive in turn: every
// one is refused with a *CheckError.
func TestEveryFlippedByteRefused(t *testing.T) {
	b, err := Encode(cluster(pacedRunning("prod", 60)))
	require.NoError(t, err)
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x01
		_, err := Decode(c)
		var ce *CheckError
		require.ErrorAs(t, err, &ce, "byte %d flipped was accepted", i)
		require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupportedVersion) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrMissingMapping), "byte %d: %v", i, err)
	}
}

// TestEveryTruncationRefused cuts the archive at every length.
func TestEveryTruncationRefused(t *testing.T) {
	b, err := Encode(cluster(pacedStopped("batch")))
	require.NoError(t, err)
	for n := 0; n < len(b); n++ {
		_, err := Decode(b[:n])
		require.ErrorIs(t, err, ErrCorrupt, "cut at %d of %d", n, len(b))
	}
	// Record padding with zeros, as tar tools write, is accepted.
	_, err = Decode(append(bytes.Clone(b), make([]byte, 10240-len(b)%10240)...))
	require.NoError(t, err)
}

// rawArchive assembles an archive from raw entry bodies with a correct
// whole-archive trailer, so a test can forge one check at a time.
func rawArchive(t *testing.T, manifest []byte, sections ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	put := func(name string, body []byte) {
		require.NoError(t, tw.WriteHeader(header(name, int64(len(body)), time.Unix(0, 0))))
		_, err := tw.Write(body)
		require.NoError(t, err)
	}
	put("nspl-backup/manifest.json", manifest)
	for i, s := range sections {
		put("nspl-backup/"+sectionName(i), s)
	}
	require.NoError(t, tw.Flush())
	sum := sha256.Sum256(buf.Bytes())
	tb, err := json.Marshal(trailerV1{Length: int64(buf.Len()), SHA256: hex.EncodeToString(sum[:])})
	require.NoError(t, err)
	put("nspl-backup/trailer.json", tb)
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// manifestFor returns a manifest listing sections with their true
// lengths and digests.
func manifestFor(version int, sections ...[]byte) manifestV1 {
	m := manifestV1{Format: Format, Version: version, CapturedAt: t0, CapturedAtText: formatTime(t0), Scope: ScopeCluster, Node: "n",
		Sections: []sectionV1{}}
	for i, s := range sections {
		sum := sha256.Sum256(s)
		m.Sections = append(m.Sections, sectionV1{Name: sectionName(i), Length: int64(len(s)), SHA256: hex.EncodeToString(sum[:])})
	}
	return m
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestForgedChecksRefused(t *testing.T) {
	good := mustJSON(t, toRecord(pacedRunning("prod", 60)))
	noMapping := toRecord(pacedRunning("prod", 60))
	noMapping.Mapping = nil
	otherMapping := toRecord(pacedRunning("prod", 60))
	otherMapping.Mapping = &mappingV1{WallStartedAt: t0, LogicalStart: 0, Rate: 60}
	stoppedWithMapping := toRecord(pacedRunning("prod", 60))
	stoppedWithMapping.Status = lifecycle.Stopped
	stoppedWithMapping.Frontier, stoppedWithMapping.LogicalNow = nil, nil

	tests := []struct {
		name    string
		archive func() []byte
		err     error
		section string
		check   string
	}{
		{"valid forged archive", func() []byte {
			return rawArchive(t, mustJSON(t, manifestFor(1, good)), good)
		}, nil, "", ""},
		{"wrong section digest", func() []byte {
			m := manifestFor(1, good)
			m.Sections[0].SHA256 = strings.Repeat("0", 64)
			return rawArchive(t, mustJSON(t, m), good)
		}, ErrCorrupt, "domains/0001.json", "sha256"},
		{"wrong section length", func() []byte {
			m := manifestFor(1, good)
			m.Sections[0].Length++
			return rawArchive(t, mustJSON(t, m), good)
		}, ErrCorrupt, "domains/0001.json", "length"},
		{"wrong whole digest", func() []byte {
			b := rawArchive(t, mustJSON(t, manifestFor(1, good)), good)
			i := bytes.LastIndex(b, []byte(`"sha256":"`)) // the trailer's digest of the whole
			return forgeTrailer(t, b, b[i+10:i+10+64], strings.Repeat("f", 64))
		}, ErrCorrupt, "archive", "sha256"},
		{"section missing from manifest", func() []byte {
			return rawArchive(t, mustJSON(t, manifestFor(1)), good)
		}, ErrCorrupt, "manifest.json", "sections"},
		{"missing mapping on a paced running domain", func() []byte {
			s := mustJSON(t, noMapping)
			return rawArchive(t, mustJSON(t, manifestFor(1, s)), s)
		}, ErrMissingMapping, "domains/0001.json", "mapping"},
		{"mapping differs from start point", func() []byte {
			s := mustJSON(t, otherMapping)
			return rawArchive(t, mustJSON(t, manifestFor(1, s)), s)
		}, ErrCorrupt, "domains/0001.json", "mapping"},
		{"stopped domain with a mapping", func() []byte {
			s := mustJSON(t, stoppedWithMapping)
			return rawArchive(t, mustJSON(t, manifestFor(1, s)), s)
		}, ErrCorrupt, "domains/0001.json", "mapping"},
		{"future version", func() []byte {
			return rawArchive(t, mustJSON(t, manifestFor(2, good)), good)
		}, ErrUnsupportedVersion, "manifest.json", "version"},
		{"version zero", func() []byte {
			return rawArchive(t, mustJSON(t, manifestFor(0, good)), good)
		}, ErrCorrupt, "manifest.json", "version"},
		{"another format", func() []byte {
			m := manifestFor(1, good)
			m.Format = "zip"
			return rawArchive(t, mustJSON(t, m), good)
		}, ErrCorrupt, "manifest.json", "format"},
		{"unknown field", func() []byte {
			s := append(bytes.TrimSuffix(good, []byte("}")), []byte(`,"extra":1}`)...)
			return rawArchive(t, mustJSON(t, manifestFor(1, s)), s)
		}, ErrCorrupt, "domains/0001.json", "decode"},
		{"trailing data in a section", func() []byte {
			s := append(bytes.Clone(good), []byte(" {}")...)
			return rawArchive(t, mustJSON(t, manifestFor(1, s)), s)
		}, ErrCorrupt, "domains/0001.json", "decode"},
		{"sections out of order", func() []byte {
			a, b := mustJSON(t, toRecord(neverStarted("b"))), mustJSON(t, toRecord(neverStarted("a")))
			return rawArchive(t, mustJSON(t, manifestFor(1, a, b)), a, b)
		}, ErrCorrupt, "domains/0002.json", "order"},
		{"invalid name", func() []byte {
			s := mustJSON(t, toRecord(neverStarted("Prod")))
			return rawArchive(t, mustJSON(t, manifestFor(1, s)), s)
		}, ErrCorrupt, "domains/0001.json", "name"},
		{"domain scope with two domains", func() []byte {
			a, b := mustJSON(t, toRecord(neverStarted("a"))), mustJSON(t, toRecord(neverStarted("b")))
			m := manifestFor(1, a, b)
			m.Scope = ScopeDomain
			return rawArchive(t, mustJSON(t, m), a, b)
		}, ErrCorrupt, "manifest.json", "scope"},
		{"not a tar stream", func() []byte { return []byte("hello") }, ErrCorrupt, "archive", "structure"},
		{"empty file", func() []byte { return nil }, ErrCorrupt, "archive", "structure"},
		{"oversized entry claim", func() []byte {
			// The largest size a ustar header holds: 8 GiB − 1.
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			require.NoError(t, tw.WriteHeader(header("nspl-backup/manifest.json", 1<<33-1, time.Unix(0, 0))))
			return buf.Bytes()[:512]
		}, ErrTooLarge, "manifest.json", "length"},
		{"foreign entry", func() []byte {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "etc/", Mode: 0o700, Format: tar.FormatUSTAR}))
			require.NoError(t, tw.Close())
			return buf.Bytes()
		}, ErrCorrupt, "archive", "structure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Decode(tc.archive())
			if tc.err == nil {
				require.NoError(t, err)
				require.Len(t, a.Domains, 1)
				return
			}
			require.ErrorIs(t, err, tc.err)
			var ce *CheckError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.section, ce.Section, "%v", err)
			require.Equal(t, tc.check, ce.Check, "%v", err)
			require.Contains(t, err.Error(), `section "`+tc.section+`": check `+tc.check+` failed`)
			// Only what was never an archive is told so; everything else
			// is an archive that was damaged or altered.
			never := tc.name == "not a tar stream" || tc.name == "empty file" || tc.name == "foreign entry"
			require.Equal(t, never, ce.NotArchive, "%v", err)
			require.Equal(t, never, strings.Contains(err.Error(), "this file is not an nspl archive"), "%v", err)
			require.Equal(t, !never && tc.err == ErrCorrupt, strings.Contains(err.Error(), "damaged or was altered"), "%v", err)
		})
	}
}

// forgeTrailer replaces the trailer's digest text old with repl, keeping the
// trailer entry's length (and so its header) valid.
func forgeTrailer(t *testing.T, b, old []byte, repl string) []byte {
	t.Helper()
	require.Len(t, repl, len(old))
	c := bytes.Clone(b)
	i := bytes.LastIndex(c, old)
	require.GreaterOrEqual(t, i, 0)
	copy(c[i:], repl)
	return c
}

func TestErrorMessages(t *testing.T) {
	s := toRecord(pacedRunning("prod", 60))
	s.Mapping = nil
	body := mustJSON(t, s)
	_, err := Decode(rawArchive(t, mustJSON(t, manifestFor(1, body)), body))
	require.EqualError(t, err, `backup archive: section "domains/0001.json": check mapping failed: domain 'prod' is paced and running at generation 3 but its record has no mapping; this archive cannot restore the domain's clock; back the domain up again from a catalog that holds its mapping`)

	good := mustJSON(t, toRecord(neverStarted("a")))
	_, err = Decode(rawArchive(t, mustJSON(t, manifestFor(7, good)), good))
	require.EqualError(t, err, `backup archive: section "manifest.json": check version failed: format version 7 is newer than version 1, the newest this build reads; a newer nspl wrote it; restore it with that version or newer`)
}

func TestEncodeRefusesInvalidArchives(t *testing.T) {
	noMapping := pacedRunning("prod", 60)
	noMapping.Record.Mapping = nil
	badRate := pacedStopped("b")
	badRate.Record.LastStart.Rate = math.Inf(1)
	tests := []struct {
		name string
		a    Archive
		err  error
	}{
		{"missing mapping", cluster(noMapping), ErrMissingMapping},
		{"infinite rate", cluster(badRate), ErrInvalidArchive},
		{"duplicate", cluster(neverStarted("a"), neverStarted("a")), ErrInvalidArchive},
		{"empty name", cluster(neverStarted("")), ErrInvalidArchive},
		{"domain scope with none", Archive{Scope: ScopeDomain}, ErrInvalidArchive},
		{"unknown scope", Archive{Scope: "galaxy"}, ErrInvalidArchive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Encode(tc.a)
			require.ErrorIs(t, err, tc.err)
		})
	}
}

func TestWriteAndRead(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "prod.nsplbak")
	a := cluster(pacedRunning("prod", 60))
	p, size, err := Write(dest, a, WriteOptions{})
	require.NoError(t, err)
	require.Equal(t, dest, p)
	fi, err := os.Stat(dest)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Equal(t, size, fi.Size())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")

	p, got, err := Read(dest)
	require.NoError(t, err)
	require.Equal(t, dest, p)
	require.Equal(t, a, got)

	// Overwriting replaces the whole archive.
	_, _, err = Write(dest, cluster(neverStarted("other")), WriteOptions{})
	require.NoError(t, err)
	_, got, err = Read(dest)
	require.NoError(t, err)
	require.Equal(t, []string{"other"}, got.Names())

	// A refused encode leaves the destination as it was and no temporary file.
	bad := pacedRunning("prod", 60)
	bad.Record.Mapping = nil
	_, _, err = Write(dest, cluster(bad), WriteOptions{})
	require.ErrorIs(t, err, ErrMissingMapping)
	_, got, err = Read(dest)
	require.NoError(t, err)
	require.Equal(t, []string{"other"}, got.Names())
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
}

func TestPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	p, err := ExpandPath("~/b/x.nsplbak")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, "b", "x.nsplbak"), p)
	p, err = ExpandPath("~")
	require.NoError(t, err)
	require.Equal(t, home, p)
	p, err = ExpandPath("~other")
	require.NoError(t, err)
	require.True(t, filepath.IsAbs(p))
	require.Equal(t, "~other", filepath.Base(p), "only ~/ expands")
	_, err = ExpandPath("")
	require.ErrorIs(t, err, ErrPath)
	_, err = ExpandPath("a\x00b")
	require.ErrorIs(t, err, ErrPath)

	p, _, err = Write("~/x.nsplbak", cluster(), WriteOptions{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, "x.nsplbak"), p)
	_, _, err = Read("~/x.nsplbak")
	require.NoError(t, err)

	_, _, err = Write(filepath.Join(home, "missing", "x.nsplbak"), cluster(), WriteOptions{})
	require.ErrorIs(t, err, ErrPath)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "check the directory exists and is writable")
	_, _, err = Write(home, cluster(), WriteOptions{})
	require.ErrorIs(t, err, ErrPath)
	require.ErrorContains(t, err, "is a directory")
	_, _, err = Read(filepath.Join(home, "nope"))
	require.ErrorIs(t, err, ErrPath)
	require.ErrorContains(t, err, "does not exist")
	_, _, err = Read(home)
	require.ErrorIs(t, err, ErrPath)

	// A file over the cap is refused before it is read.
	big := filepath.Join(home, "big")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxArchiveBytes+4096))
	require.NoError(t, f.Close())
	_, _, err = Read(big)
	require.ErrorIs(t, err, ErrTooLarge)
	var ce *CheckError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, big, ce.Path)
}

func TestCheckErrorNamesThePath(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "x")
	_, _, err := Write(dest, cluster(pacedRunning("prod", 60)), WriteOptions{})
	require.NoError(t, err)
	b, err := os.ReadFile(dest)
	require.NoError(t, err)
	b[600] ^= 0xff
	require.NoError(t, os.WriteFile(dest, b, 0o600))
	_, _, err = Read(dest)
	require.ErrorIs(t, err, ErrCorrupt)
	require.True(t, strings.HasPrefix(err.Error(), "backup '"+dest+"': section "), err.Error())
}

// TestMappingProjectionSurvives checks a decoded mapping projects exactly
// as the written one: the values are kept bit for bit.
func TestMappingProjectionSurvives(t *testing.T) {
	for _, rate := range []float64{5e-324, 1e-9, 1.0 / 3, 60, 1e300} {
		d := pacedRunning("p", rate)
		b, err := Encode(cluster(d))
		require.NoError(t, err)
		a, err := Decode(b)
		require.NoError(t, err)
		got := *a.Domains[0].Record.Mapping
		require.Equal(t, math.Float64bits(d.Record.Mapping.Rate), math.Float64bits(got.Rate))
		now := t0 + int64(time.Hour)
		want, werr := d.Record.Mapping.Project(now)
		have, herr := clock.Mapping(got).Project(now)
		require.Equal(t, werr == nil, herr == nil)
		require.Equal(t, want, have)
	}
}

func FuzzDecode(f *testing.F) {
	for _, tc := range roundTrips {
		b, err := Encode(tc.a)
		require.NoError(f, err)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte{})
	f.Add([]byte("nspl-backup/manifest.json"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Decode(b)
		if err != nil {
			var ce *CheckError
			require.ErrorAs(t, err, &ce)
			return
		}
		// Whatever decodes encodes again, and decodes to the same archive.
		again, err := Encode(a)
		require.NoError(t, err)
		back, err := Decode(again)
		require.NoError(t, err)
		require.Equal(t, a, back)
	})
}

// TestDecodeCap checks the archive cap at its boundary: one byte over is
// refused before anything is parsed.
func TestDecodeCap(t *testing.T) {
	_, err := Decode(make([]byte, MaxArchiveBytes+1))
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = Decode(make([]byte, MaxArchiveBytes))
	require.ErrorIs(t, err, ErrCorrupt, "just inside the cap the archive is parsed (and these zeros are no archive)")
}
