package backup

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/record"
)

// Entry names inside the tar stream.
const (
	entryPrefix  = "nspl-backup/"
	manifestName = "manifest.json"
	trailerName  = "trailer.json"
	// wholeSection names the tar stream as a whole in a CheckError.
	wholeSection = "archive"
)

func sectionName(i int) string { return fmt.Sprintf("domains/%04d.json", i+1) }

// manifestV1 is the frozen version-1 manifest.
type manifestV1 struct {
	Format          string      `json:"format"`
	Version         int         `json:"version"`
	CapturedAt      int64       `json:"captured_at"`
	CapturedAtText  string      `json:"captured_at_text"`
	Scope           Scope       `json:"scope"`
	Node            string      `json:"node"`
	CatalogRevision uint64      `json:"catalog_revision"`
	Sections        []sectionV1 `json:"sections"`
}

type sectionV1 struct {
	Name   string `json:"name"`
	Length int64  `json:"length"`
	SHA256 string `json:"sha256"`
}

// domainV1 is the frozen version-1 domain section.
type domainV1 struct {
	Name       string                `json:"name"`
	Pace       record.Pace           `json:"pace"`
	Period     uint64                `json:"period_ns"`
	Skew       uint64                `json:"skew_ns"`
	Placement  record.Placement      `json:"placement"`
	Status     record.Status         `json:"status"`
	Generation uint64                `json:"generation"`
	StartPoint *record.StartPoint    `json:"start_point"`
	Mapping    *mappingV1            `json:"mapping"`
	Authority  record.AuthorityFence `json:"authority"`
	Revision   uint64                `json:"revision"`
	Frontier   *Frontier             `json:"frontier"`
	LogicalNow *int64                `json:"logical_now"`
}

type mappingV1 struct {
	WallStartedAt int64   `json:"wall_started_at"`
	LogicalStart  int64   `json:"logical_start"`
	Rate          float64 `json:"time_rate"`
}

// trailerV1 is the whole-archive check.
type trailerV1 struct {
	Length int64  `json:"length"`
	SHA256 string `json:"sha256"`
}

func toRecord(d Domain) domainV1 {
	r := d.Record
	w := domainV1{
		Name: r.Name, Pace: r.Pace, Period: r.Period, Skew: r.Skew, Placement: r.Placement,
		Status: r.Status, Generation: r.Generation, Authority: r.Authority, Revision: r.Revision,
		Frontier: d.Frontier, LogicalNow: d.LogicalNow,
	}
	if r.Generation > 0 {
		sp := r.LastStart
		w.StartPoint = &sp
	}
	if m := r.Mapping; m != nil {
		w.Mapping = &mappingV1{WallStartedAt: m.WallStartedAt, LogicalStart: m.LogicalStart, Rate: m.Rate}
	}
	return w
}

func fromRecord(w domainV1) Domain {
	r := record.Domain{
		Name: w.Name, Pace: w.Pace, Period: w.Period, Skew: w.Skew, Placement: w.Placement,
		Status: w.Status, Generation: w.Generation, Authority: w.Authority, Revision: w.Revision,
	}
	if w.StartPoint != nil {
		r.LastStart = *w.StartPoint
	}
	if w.Mapping != nil {
		r.Mapping = &clock.Mapping{WallStartedAt: w.Mapping.WallStartedAt, LogicalStart: w.Mapping.LogicalStart, Rate: w.Mapping.Rate}
	}
	return Domain{Record: r, Frontier: w.Frontier, LogicalNow: w.LogicalNow}
}

// checkRecord checks the invariants of one domain section. It returns the
// name of the failed check, a detail and the sentinel, or "" when the
// record is sound.
func checkRecord(w domainV1) (check, detail string, err error) {
	bad := func(check, format string, args ...any) (string, string, error) {
		return check, fmt.Sprintf(format, args...), ErrCorrupt
	}
	if stored, perr := grammar.ParseName(w.Name); perr != nil || stored != w.Name {
		return bad("name", "domain name %q is not a stored domain name", w.Name)
	}
	if w.Pace > record.Paced || w.Placement > record.SuggestSeparation || w.Status > record.Running {
		return bad("enum", "domain '%s': pace, placement or status out of range", w.Name)
	}
	switch {
	case w.Pace == record.Paced && w.Period == 0:
		return bad("period", "domain '%s' is paced with PERIOD 0", w.Name)
	case w.Pace == record.Unpaced && (w.Period != 0 || w.Skew != 0):
		return bad("period", "domain '%s' is unpaced with a PERIOD or SKEW", w.Name)
	case w.Pace == record.Unpaced && (w.Authority != record.AuthorityFence{}):
		return bad("authority", "domain '%s' is unpaced with an authority fence", w.Name)
	case w.Authority.Assigned() != (w.Authority.Incarnation != 0):
		return bad("authority", "domain '%s': authority fence names only one of node and incarnation", w.Name)
	case w.Status == record.Running && w.Generation == 0:
		return bad("generation", "domain '%s' is running without a generation", w.Name)
	case (w.Generation > 0) != (w.StartPoint != nil):
		return bad("start_point", "domain '%s': generation %d but start point present=%t", w.Name, w.Generation, w.StartPoint != nil)
	}
	if sp := w.StartPoint; sp != nil && !(sp.Rate > 0 && !math.IsInf(sp.Rate, 1)) {
		return bad("start_point", "domain '%s': TIME RATE %v is not a positive finite number", w.Name, sp.Rate)
	}
	pacedRunning := w.Pace == record.Paced && w.Status == record.Running
	switch {
	case pacedRunning && w.Mapping == nil:
		return "mapping", fmt.Sprintf("domain '%s' is paced and running at generation %d but its record has no mapping", w.Name, w.Generation), ErrMissingMapping
	case !pacedRunning && w.Mapping != nil:
		return bad("mapping", "domain '%s' has a mapping but is not paced and running", w.Name)
	case w.Mapping != nil && (clock.Mapping{WallStartedAt: w.Mapping.WallStartedAt, LogicalStart: w.Mapping.LogicalStart, Rate: w.Mapping.Rate}) != w.StartPoint.Mapping():
		return bad("mapping", "domain '%s': mapping differs from its start point", w.Name)
	}
	if f := w.Frontier; f != nil && (w.Status != record.Running || f.Generation != w.Generation || f.TickID == 0) {
		return bad("frontier", "domain '%s': frontier of generation %d tick %d does not belong to the running generation %d", w.Name, f.Generation, f.TickID, w.Generation)
	}
	if w.LogicalNow != nil && w.Status != record.Running {
		return bad("logical_now", "domain '%s' is stopped but has a clock reading", w.Name)
	}
	return "", "", nil
}

// checkArchive checks what Encode needs of an Archive.
func checkArchive(a Archive) error {
	if a.Scope != ScopeCluster && a.Scope != ScopeDomain {
		return fmt.Errorf("%w: scope %q is neither cluster nor domain", ErrInvalidArchive, a.Scope)
	}
	if a.Scope == ScopeDomain && len(a.Domains) != 1 {
		return fmt.Errorf("%w: a domain backup holds exactly one domain, not %d", ErrInvalidArchive, len(a.Domains))
	}
	if len(a.Domains) > MaxDomains {
		return fmt.Errorf("%w: %d domains is more than the %d one archive holds; back domains up separately", ErrInvalidArchive, len(a.Domains), MaxDomains)
	}
	seen := make(map[string]struct{}, len(a.Domains))
	for _, d := range a.Domains {
		if _, dup := seen[d.Record.Name]; dup {
			return fmt.Errorf("%w: domain '%s' appears twice", ErrInvalidArchive, d.Record.Name)
		}
		seen[d.Record.Name] = struct{}{}
		if check, detail, err := checkRecord(toRecord(d)); check != "" {
			return fmt.Errorf("%w: check %s: %s", errors.Join(ErrInvalidArchive, err), check, detail)
		}
	}
	return nil
}

func formatTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }
