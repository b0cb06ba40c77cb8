package backup

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// maxUSTARSeconds is the largest modification time a ustar header holds.
const maxUSTARSeconds = 077777777777

// Encode returns the version-1 archive of a. Domains are written in name
// order; equal archives give equal bytes. An Archive that breaks a domain
// invariant (for example a paced running domain without its mapping) is an
// ErrInvalidArchive error: Encode never writes an archive Decode refuses.
func Encode(a Archive) ([]byte, error) {
	if err := checkArchive(a); err != nil {
		return nil, err
	}
	domains := slices.Clone(a.Domains)
	slices.SortFunc(domains, func(x, y Domain) int { return strings.Compare(x.Record.Name, y.Record.Name) })

	sections := make([][]byte, len(domains))
	m := manifestV1{
		Format: Format, Version: Version, CapturedAt: a.CapturedAt, CapturedAtText: formatTime(a.CapturedAt),
		Scope: a.Scope, Node: a.Node, CatalogRevision: a.CatalogRevision, Sections: make([]sectionV1, len(domains)),
	}
	for i, d := range domains {
		b, err := marshal(toRecord(d))
		if err != nil {
			return nil, fmt.Errorf("%w: domain '%s': %v", ErrInvalidArchive, d.Record.Name, err)
		}
		if len(b) > MaxSectionBytes {
			return nil, fmt.Errorf("%w: domain '%s' encodes to %d bytes, over the %d-byte section cap", ErrTooLarge, d.Record.Name, len(b), MaxSectionBytes)
		}
		sum := sha256.Sum256(b)
		sections[i] = b
		m.Sections[i] = sectionV1{Name: sectionName(i), Length: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
	}
	manifest, err := marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrInvalidArchive, err)
	}
	if len(manifest) > MaxSectionBytes {
		return nil, fmt.Errorf("%w: the manifest encodes to %d bytes, over the %d-byte section cap", ErrTooLarge, len(manifest), MaxSectionBytes)
	}

	mod := time.Unix(min(max(a.CapturedAt/int64(time.Second), 0), maxUSTARSeconds), 0)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	put := func(name string, body []byte) error {
		if err := tw.WriteHeader(header(entryPrefix+name, int64(len(body)), mod)); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	if err := put(manifestName, manifest); err != nil {
		return nil, fmt.Errorf("backup: write manifest: %w", err)
	}
	for i, b := range sections {
		if err := put(m.Sections[i].Name, b); err != nil {
			return nil, fmt.Errorf("backup: write %s: %w", m.Sections[i].Name, err)
		}
	}
	if err := tw.Flush(); err != nil {
		return nil, fmt.Errorf("backup: write sections: %w", err)
	}
	whole := sha256.Sum256(buf.Bytes())
	trailer, err := marshal(trailerV1{Length: int64(buf.Len()), SHA256: hex.EncodeToString(whole[:])})
	if err != nil {
		return nil, fmt.Errorf("backup: trailer: %w", err)
	}
	if err := put(trailerName, trailer); err != nil {
		return nil, fmt.Errorf("backup: write trailer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("backup: close archive: %w", err)
	}
	if buf.Len() > MaxArchiveBytes {
		return nil, fmt.Errorf("%w: %d bytes is over the %d-byte archive cap; back domains up separately", ErrTooLarge, buf.Len(), MaxArchiveBytes)
	}
	return buf.Bytes(), nil
}

// header is the tar header of every entry: a regular ustar file, mode
// 0600, owned by nobody in particular.
func header(name string, size int64, mod time.Time) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: size, ModTime: mod, Format: tar.FormatUSTAR}
}

// headerBlock returns the 512-byte header block Encode writes for an
// entry, or nil when the fields cannot be written as one.
func headerBlock(name string, size int64, mod time.Time) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(header(name, size, mod)); err != nil || buf.Len() != blockSize {
		return nil
	}
	return buf.Bytes()
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// strict decodes one JSON value into v, refusing unknown fields and
// trailing data.
func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// entry is one file of the tar stream.
type entry struct {
	name   string // without entryPrefix
	data   []byte
	offset int64 // of its header block
	end    int64 // just past its padding
}

const blockSize = 512

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// countingReader counts the bytes the tar reader consumed, which gives the
// offset of each entry's header.
type countingReader struct {
	r *bytes.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Decode verifies b completely and returns the archive it holds. It checks
// the structure, the format version, the whole archive's length and SHA-256
// digest, every section's length and digest, strict JSON decoding and the
// domain invariants, in that order, and returns a *CheckError naming the
// section and the check at the first failure. It never panics and never
// allocates more than the caps in this package on behalf of a length read
// from b.
func Decode(b []byte) (Archive, error) {
	if len(b) > MaxArchiveBytes {
		return Archive{}, fail(wholeSection, "length", ErrTooLarge, "%d bytes is over the %d-byte archive cap", len(b), MaxArchiveBytes)
	}
	entries, err := readEntries(b)
	if err != nil {
		return Archive{}, err
	}
	manifest, trailer := entries[0], entries[len(entries)-1]

	// The version decides how the rest is read, so it is read first, from
	// the one field every version keeps; nothing else is trusted yet.
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(manifest.data, &head); err != nil {
		return Archive{}, fail(manifestName, "decode", ErrCorrupt, "%v", err)
	}
	switch {
	case head.Format != Format:
		return Archive{}, fail(manifestName, "format", ErrCorrupt, "format %q is not %q", head.Format, Format)
	case head.Version > Version:
		return Archive{}, fail(manifestName, "version", ErrUnsupportedVersion, "format version %d is newer than version %d, the newest this build reads", head.Version, Version)
	case head.Version < 1:
		return Archive{}, fail(manifestName, "version", ErrCorrupt, "format version %d does not exist", head.Version)
	}

	var t trailerV1
	if err := strict(trailer.data, &t); err != nil {
		return Archive{}, fail(trailerName, "decode", ErrCorrupt, "%v", err)
	}
	if t.Length != trailer.offset {
		return Archive{}, fail(wholeSection, "length", ErrCorrupt, "the trailer records %d bytes before it, the archive holds %d", t.Length, trailer.offset)
	}
	whole := sha256.Sum256(b[:trailer.offset])
	if got := hex.EncodeToString(whole[:]); got != t.SHA256 {
		return Archive{}, fail(wholeSection, "sha256", ErrCorrupt, "the archive's digest is %s, the trailer records %q", got, t.SHA256)
	}

	var m manifestV1
	if err := strict(manifest.data, &m); err != nil {
		return Archive{}, fail(manifestName, "decode", ErrCorrupt, "%v", err)
	}
	body := entries[1 : len(entries)-1]
	if len(m.Sections) != len(body) {
		return Archive{}, fail(manifestName, "sections", ErrCorrupt, "the manifest lists %d sections, the archive holds %d", len(m.Sections), len(body))
	}
	for i, s := range m.Sections {
		e := body[i]
		want := sectionName(i)
		if s.Name != want || e.name != want {
			return Archive{}, fail(want, "name", ErrCorrupt, "section %d is named %q in the manifest and %q in the archive", i+1, s.Name, e.name)
		}
		if s.Length != int64(len(e.data)) {
			return Archive{}, fail(want, "length", ErrCorrupt, "the manifest records %d bytes, the section holds %d", s.Length, len(e.data))
		}
		sum := sha256.Sum256(e.data)
		if got := hex.EncodeToString(sum[:]); got != s.SHA256 {
			return Archive{}, fail(want, "sha256", ErrCorrupt, "the section's digest is %s, the manifest records %q", got, s.SHA256)
		}
	}

	if m.CapturedAtText != formatTime(m.CapturedAt) {
		return Archive{}, fail(manifestName, "captured_at", ErrCorrupt, "captured_at_text %q does not spell captured_at %d", m.CapturedAtText, m.CapturedAt)
	}
	if m.Scope != ScopeCluster && m.Scope != ScopeDomain {
		return Archive{}, fail(manifestName, "scope", ErrCorrupt, "scope %q is neither cluster nor domain", m.Scope)
	}
	if m.Scope == ScopeDomain && len(body) != 1 {
		return Archive{}, fail(manifestName, "scope", ErrCorrupt, "a domain backup holds exactly one domain, this one holds %d", len(body))
	}
	a := Archive{Version: m.Version, CapturedAt: m.CapturedAt, Scope: m.Scope, Node: m.Node, CatalogRevision: m.CatalogRevision,
		Domains: make([]Domain, 0, len(body))}
	for i, e := range body {
		var w domainV1
		if err := strict(e.data, &w); err != nil {
			return Archive{}, fail(e.name, "decode", ErrCorrupt, "%v", err)
		}
		if check, detail, err := checkRecord(w); check != "" {
			return Archive{}, fail(e.name, check, err, "%s", detail)
		}
		if i > 0 && w.Name <= a.Domains[i-1].Record.Name {
			return Archive{}, fail(e.name, "order", ErrCorrupt, "domain '%s' follows '%s'; sections are in strictly increasing name order", w.Name, a.Domains[i-1].Record.Name)
		}
		a.Domains = append(a.Domains, fromRecord(w))
	}
	return a, nil
}

// readEntries checks the tar structure and returns its entries: the
// manifest first, the trailer last, domain sections between, every size
// capped before it is read.
func readEntries(b []byte) ([]entry, error) {
	cr := &countingReader{r: bytes.NewReader(b)}
	tr := tar.NewReader(cr)
	var entries []entry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ce := fail(wholeSection, "structure", ErrCorrupt, "not a readable tar stream after %d entries: %v", len(entries), err)
			ce.NotArchive = len(entries) == 0
			return nil, ce
		}
		if len(entries) >= MaxDomains+2 {
			return nil, fail(wholeSection, "structure", ErrTooLarge, "more than %d entries", MaxDomains+2)
		}
		name, ok := strings.CutPrefix(hdr.Name, entryPrefix)
		if !ok || hdr.Typeflag != tar.TypeReg {
			ce := fail(wholeSection, "structure", ErrCorrupt, "entry %q (type %q) is not a regular file under %s", hdr.Name, hdr.Typeflag, entryPrefix)
			ce.NotArchive = len(entries) == 0 // a tar stream, but not nspl's
			return nil, ce
		}
		if hdr.Size < 0 || hdr.Size > MaxSectionBytes {
			return nil, fail(name, "length", ErrTooLarge, "the entry claims %d bytes, over the %d-byte section cap", hdr.Size, MaxSectionBytes)
		}
		offset := cr.n - blockSize // the ustar header block just read
		// The trailer's header is covered by no digest, so every header
		// must be exactly the one Encode writes for its fields.
		if offset < 0 || !bytes.Equal(b[offset:cr.n], headerBlock(hdr.Name, hdr.Size, hdr.ModTime)) {
			return nil, fail(name, "header", ErrCorrupt, "the entry's tar header is not the one nspl writes")
		}
		data := make([]byte, hdr.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, fail(name, "length", ErrCorrupt, "the entry claims %d bytes but the archive ends early: %v", hdr.Size, err)
		}
		// The padding of the last entry is covered by no digest, so every
		// entry's padding must be zeros.
		end := min(cr.n+(blockSize-cr.n%blockSize)%blockSize, int64(len(b)))
		if !allZero(b[cr.n:end]) {
			return nil, fail(name, "padding", ErrCorrupt, "the entry's padding after byte %d is not zeros", cr.n)
		}
		entries = append(entries, entry{name: name, data: data, offset: offset, end: end})
	}
	// A stream cut at an entry boundary still parses: the end-of-archive
	// blocks are what prove it is whole.
	if n := len(entries); n > 0 && cr.n < entries[n-1].end+2*blockSize {
		return nil, fail(wholeSection, "structure", ErrCorrupt, "the archive ends after %d bytes without its end-of-archive blocks: it is truncated", len(b))
	}
	if !allZero(b[min(int(cr.n), len(b)):]) {
		return nil, fail(wholeSection, "structure", ErrCorrupt, "data follows the end of the tar stream at byte %d", cr.n)
	}
	switch {
	case len(entries) == 0:
		ce := fail(wholeSection, "structure", ErrCorrupt, "no entries")
		ce.NotArchive = true
		return nil, ce
	case entries[0].name != manifestName:
		return nil, fail(wholeSection, "structure", ErrCorrupt, "the first entry is %q, not %s%s", entries[0].name, entryPrefix, manifestName)
	case len(entries) < 2 || entries[len(entries)-1].name != trailerName:
		return nil, fail(trailerName, "structure", ErrCorrupt, "the last entry is %q, not %s%s: the archive is truncated", entries[len(entries)-1].name, entryPrefix, trailerName)
	}
	return entries, nil
}
