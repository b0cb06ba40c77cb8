package lifecycle

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
)

func TestResolveStart(t *testing.T) {
	paced := Domain{Name: "prod", Pace: Paced, Period: uint64(sec)}
	resumed := paced
	resumed.Generation = 2
	resumed.LastStart = point(StartAt, 0, utc0-sec, 60)
	unpaced := Domain{Name: "arch", Pace: Unpaced}
	avail := []NodeIncarnation{{"node-a", 11, 1}, {"node-b", 22, 2}}
	voters := []string{"node-a", "node-b"}
	owner, _ := SelectAuthority("prod", avail, voters)
	readable := utc0 - 42*sec

	tests := []struct {
		name     string
		d        Domain
		req      StartRequest
		readable *int64
		avail    []NodeIncarnation
		want     ResolvedStart
		err      error
	}{
		{name: "at now", d: paced, req: StartRequest{Mode: StartNow}, avail: avail,
			want: ResolvedStart{Point: point(StartNow, utc0, utc0, 1), Authority: &owner}},
		{name: "at now with rate", d: paced, req: StartRequest{Mode: StartNow, Rate: 60}, avail: avail,
			want: ResolvedStart{Point: point(StartNow, utc0, utc0, 60), Authority: &owner}},
		{name: "at now ignores readable", d: resumed, req: StartRequest{Mode: StartNow}, readable: &readable, avail: avail,
			want: ResolvedStart{Point: point(StartNow, utc0, utc0, 1), Authority: &owner}},
		{name: "at timestamp kept", d: paced, req: StartRequest{Mode: StartAt, At: math.MinInt64, Rate: 5e-324}, avail: avail,
			want: ResolvedStart{Point: point(StartAt, math.MinInt64, utc0, 5e-324), Authority: &owner}},
		{name: "at timestamp max", d: paced, req: StartRequest{Mode: StartAt, At: math.MaxInt64, Rate: math.MaxFloat64}, avail: avail,
			want: ResolvedStart{Point: point(StartAt, math.MaxInt64, utc0, math.MaxFloat64), Authority: &owner}},
		{name: "resume without readable", d: resumed, req: StartRequest{Mode: StartResume}, avail: avail,
			want: ResolvedStart{Point: point(StartResume, utc0, utc0, 1), Authority: &owner}},
		{name: "resume with readable keeps rate", d: resumed, req: StartRequest{Mode: StartResume}, readable: &readable, avail: avail,
			want: ResolvedStart{Point: point(StartResume, readable, utc0, 60), Authority: &owner}},
		{name: "resume with readable never started", d: paced, req: StartRequest{Mode: StartResume}, readable: &readable, avail: avail,
			want: ResolvedStart{Point: point(StartResume, readable, utc0, 1), Authority: &owner}},
		{name: "unpaced has no authority", d: unpaced, req: StartRequest{Mode: StartNow}, avail: nil,
			want: ResolvedStart{Point: point(StartNow, utc0, utc0, 1)}},
		{name: "paced without voters", d: paced, req: StartRequest{Mode: StartNow}, avail: nil, err: ErrNoLiveVoter},
		{name: "resume with rate", d: resumed, req: StartRequest{Mode: StartResume, Rate: 2}, avail: avail, err: ErrInvalidCommand},
		{name: "negative rate", d: paced, req: StartRequest{Mode: StartNow, Rate: -1}, avail: avail, err: ErrInvalidCommand},
		{name: "nan rate", d: paced, req: StartRequest{Mode: StartAt, Rate: math.NaN()}, avail: avail, err: ErrInvalidCommand},
		{name: "infinite rate", d: paced, req: StartRequest{Mode: StartAt, Rate: math.Inf(1)}, avail: avail, err: ErrInvalidCommand},
		{name: "unknown mode", d: paced, req: StartRequest{Mode: 7}, avail: avail, err: ErrInvalidCommand},
		{name: "nameless domain", d: Domain{}, req: StartRequest{Mode: StartNow}, avail: avail, err: ErrInvalidCommand},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveStart(tc.d, tc.req, utc0, tc.readable, tc.avail, voters)
			require.ErrorIs(t, err, tc.err)
			if tc.err != nil {
				require.Equal(t, ResolvedStart{}, got)
				return
			}
			require.Equal(t, tc.want, got)
			_, err = EncodeCommand(Command{Op: OpStart, Start: &Start{Domain: tc.d.Name, Resolved: got}})
			require.NoError(t, err, "a resolved start always encodes")
		})
	}
	_, err := ResolveStart(paced, StartRequest{Mode: StartNow}, utc0, nil, nil, voters)
	require.EqualError(t, err, "no live voter is available to own the clock for domain 'prod'; wait for a voting node to become available and retry")
}

// TestStartThroughApply resolves and applies starts the way the command
// handler does, including a resume from the projected readable time.
func TestStartThroughApply(t *testing.T) {
	s := NewState()
	mustApply(t, s, register(nodeA), createPaced("prod"))
	avail, voters := s.Incarnations(), []string{"node-a"}

	d, _ := s.Domain("prod")
	r, err := ResolveStart(d, StartRequest{Mode: StartAt, At: 0, Rate: 60}, utc0, nil, avail, voters)
	require.NoError(t, err)
	mustApply(t, s, startCmd("prod", r.Point, r.Authority))

	d, _ = s.Domain("prod")
	rd, err := Readable(d, utc0+10*sec)
	require.NoError(t, err)
	require.Equal(t, 600*sec, *rd)

	// STOP; START inside one transaction resumes from that readable time.
	tx, err := ResolveTransaction(d, []StepRequest{{Op: StepStop}, {Op: StepStart}, {Op: StepAlterPlacement, Placement: PreferColocation}}, utc0+10*sec, rd, avail, voters)
	require.NoError(t, err)
	mustApply(t, s, Command{Op: OpTransaction, Transaction: &tx})
	d, _ = s.Domain("prod")
	require.Equal(t, uint64(2), d.Generation)
	require.Equal(t, &clock.Mapping{WallStartedAt: utc0 + 10*sec, LogicalStart: 600 * sec, Rate: 60}, d.Mapping)
	require.Equal(t, PreferColocation, d.Placement)

	// A direct STOP then a plain START with no readable time restarts from
	// the sampled UTC at rate 1.
	mustApply(t, s, stopCmd("prod"))
	d, _ = s.Domain("prod")
	rd, err = Readable(d, utc0+20*sec)
	require.NoError(t, err)
	require.Nil(t, rd)
	r, err = ResolveStart(d, StartRequest{}, utc0+20*sec, rd, avail, voters)
	require.NoError(t, err)
	require.Equal(t, point(StartResume, utc0+20*sec, utc0+20*sec, 1), r.Point)
}

func TestReadable(t *testing.T) {
	m := clock.Mapping{WallStartedAt: utc0, LogicalStart: 0, Rate: 2}
	tests := []struct {
		name string
		d    Domain
		now  int64
		want *int64
		err  error
	}{
		{name: "stopped", d: Domain{Name: "x", Pace: Paced}, now: utc0},
		{name: "unpaced running reads utc", d: Domain{Name: "x", Status: Running}, now: utc0, want: ptr(utc0)},
		{name: "paced at anchor", d: Domain{Name: "x", Pace: Paced, Status: Running, Mapping: &m}, now: utc0, want: ptr(int64(0))},
		{name: "paced before anchor", d: Domain{Name: "x", Pace: Paced, Status: Running, Mapping: &m}, now: utc0 - sec, want: ptr(int64(0))},
		{name: "paced after anchor", d: Domain{Name: "x", Pace: Paced, Status: Running, Mapping: &m}, now: utc0 + 3, want: ptr(int64(6))},
		{name: "paced without mapping", d: Domain{Name: "x", Pace: Paced, Status: Running}, now: utc0},
		{name: "overflow", d: Domain{Name: "x", Pace: Paced, Status: Running, Mapping: &clock.Mapping{WallStartedAt: 0, LogicalStart: math.MaxInt64, Rate: 1}}, now: 1, err: clock.ErrOverflow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Readable(tc.d, tc.now)
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestResolveTransaction(t *testing.T) {
	d := Domain{Name: "prod", Pace: Paced, Period: 1, Status: Running, Generation: 1, LastStart: point(StartAt, 0, 0, 4)}
	avail := []NodeIncarnation{{"node-a", 11, 1}}
	voters := []string{"node-a"}
	readable := int64(1000)

	tx, err := ResolveTransaction(d, []StepRequest{
		{Op: StepStop},
		{Op: StepStart, Start: StartRequest{Mode: StartAt, At: 5, Rate: 3}},
		{Op: StepStop},
		{Op: StepStart},
	}, utc0, &readable, avail, voters)
	require.NoError(t, err)
	require.Equal(t, "prod", tx.Domain)
	require.Len(t, tx.Steps, 4)
	require.Equal(t, point(StartAt, 5, utc0, 3), tx.Steps[1].Start.Point)
	require.Equal(t, point(StartResume, 5, utc0, 3), tx.Steps[3].Start.Point, "resume from the earlier step's origin at the shared instant")
	require.Equal(t, &nodeA, tx.Steps[3].Start.Authority)

	tx, err = ResolveTransaction(d, []StepRequest{{Op: StepStop}, {Op: StepStart}}, utc0, &readable, avail, voters)
	require.NoError(t, err)
	require.Equal(t, point(StartResume, 1000, utc0, 4), tx.Steps[1].Start.Point)

	tx, err = ResolveTransaction(d, nil, utc0, nil, nil, nil)
	require.NoError(t, err)
	require.Empty(t, tx.Steps)

	// Every placement in range resolves, the last one included.
	for _, p := range []Placement{Neutral, RequireColocation, PreferColocation, SuggestSeparation} {
		tx, err := ResolveTransaction(d, []StepRequest{{Op: StepAlterPlacement, Placement: p}}, utc0, nil, avail, voters)
		require.NoError(t, err, "placement %s", p)
		require.Equal(t, []Step{{Op: StepAlterPlacement, Placement: &p}}, tx.Steps)
	}

	tests := []struct {
		name  string
		steps []StepRequest
		avail []NodeIncarnation
		want  error
		step  int
		msg   string // the message names the failing step, counted from 1
	}{
		{"no voter", []StepRequest{{Op: StepStop}, {Op: StepStart}}, nil, ErrNoLiveVoter, 2, "transaction step 2 (start): "},
		{"bad rate", []StepRequest{{Op: StepStart, Start: StartRequest{Mode: StartNow, Rate: -1}}}, avail, ErrInvalidCommand, 1, "transaction step 1 (start): "},
		{"bad placement", []StepRequest{{Op: StepAlterPlacement, Placement: 4}}, avail, ErrInvalidCommand, 1, "transaction step 1 (alter_placement): domain 'prod': placement 4 out of range"},
		{"unknown step", []StepRequest{{Op: StepStop}, {Op: "drop"}}, avail, ErrInvalidCommand, 2, `transaction step 2 (drop): unknown step op "drop"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveTransaction(d, tc.steps, utc0, nil, tc.avail, voters)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, tc.step, AsError(err).Step)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}
