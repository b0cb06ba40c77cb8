package catalog

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// LevelTrace is the slog level raft's trace output is logged at: one step
// below slog.LevelDebug, so a handler at Debug does not see it.
const LevelTrace = slog.LevelDebug - 4

// slogAdapter routes hashicorp's hclog interface, which raft logs through,
// into a log/slog handler. Levels map one to one (Trace goes to LevelTrace),
// key/value pairs are passed through as slog attributes, the implied
// arguments of With are kept, and the Named name becomes a "logger"
// attribute. A level set with SetLevel is shared by every logger derived
// from the same root, as it is in hclog.
type slogAdapter struct {
	base    *slog.Logger // the root logger with the implied arguments
	logger  *slog.Logger // base with the name attribute
	name    string
	implied []any
	level   *atomic.Int32  // hclog.Level, shared with derived loggers
	repeats *repeatLimiter // shared with derived loggers; nil collapses nothing
}

func (l *slogAdapter) derive(base *slog.Logger, name string, implied []any) *slogAdapter {
	d := &slogAdapter{base: base, logger: base, name: name, implied: implied, level: l.level, repeats: l.repeats}
	if name != "" {
		d.logger = base.With("logger", name)
	}
	return d
}

var _ hclog.Logger = (*slogAdapter)(nil)

// newRaftLogger returns an hclog.Logger writing into logger. Nothing below
// level is logged; repeats, when not nil, collapses raft's repeated warnings
// and errors about one peer.
func newRaftLogger(logger *slog.Logger, name string, level hclog.Level, repeats *repeatLimiter) hclog.Logger {
	root := &slogAdapter{level: new(atomic.Int32), repeats: repeats}
	root.level.Store(int32(level))
	return root.derive(logger, name, nil)
}

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return LevelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// hclogLevel returns the lowest hclog level that maps to level or above.
func hclogLevel(level slog.Level) hclog.Level {
	switch {
	case level <= LevelTrace:
		return hclog.Trace
	case level <= slog.LevelDebug:
		return hclog.Debug
	case level <= slog.LevelInfo:
		return hclog.Info
	case level <= slog.LevelWarn:
		return hclog.Warn
	default:
		return hclog.Error
	}
}

func (l *slogAdapter) enabled(level hclog.Level) bool {
	if level == hclog.Off {
		return false
	}
	set := hclog.Level(l.level.Load())
	if set == hclog.Off || (set != hclog.NoLevel && level < set) {
		return false
	}
	return l.logger.Enabled(context.Background(), slogLevel(level))
}

// attrs converts hclog arguments into slog arguments: hclog.Format values
// are rendered, a trailing key without a value gets hclog's "EXTRA_VALUE_AT_END"
// treatment so nothing is dropped.
func attrs(args []any) []any {
	out := make([]any, 0, len(args)+1)
	for i := 0; i < len(args); i++ {
		switch v := args[i].(type) {
		case hclog.Format:
			if len(v) > 0 {
				if f, ok := v[0].(string); ok {
					out = append(out, fmt.Sprintf(f, v[1:]...))
					continue
				}
			}
			out = append(out, fmt.Sprint(v...))
		default:
			out = append(out, v)
		}
	}
	if len(out)%2 == 1 {
		out = append(out[:len(out)-1], "EXTRA_VALUE_AT_END", out[len(out)-1])
	}
	return out
}

func (l *slogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if !l.enabled(level) {
		return
	}
	// A logger that writes raft's debug lines is being watched closely:
	// it gets every repeat, and the limiter is for the levels an operator
	// runs at by default.
	suppressed := 0
	if !l.enabled(hclog.Debug) {
		var ok bool
		if ok, suppressed = l.repeats.allow(level, msg, args); !ok {
			return
		}
	}
	a := attrs(args)
	if suppressed > 0 {
		a = append(a, "repeated", suppressed)
	}
	l.logger.Log(context.Background(), slogLevel(level), msg, a...)
}

func (l *slogAdapter) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *slogAdapter) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *slogAdapter) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *slogAdapter) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *slogAdapter) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l *slogAdapter) IsTrace() bool { return l.enabled(hclog.Trace) }
func (l *slogAdapter) IsDebug() bool { return l.enabled(hclog.Debug) }
func (l *slogAdapter) IsInfo() bool  { return l.enabled(hclog.Info) }
func (l *slogAdapter) IsWarn() bool  { return l.enabled(hclog.Warn) }
func (l *slogAdapter) IsError() bool { return l.enabled(hclog.Error) }

func (l *slogAdapter) ImpliedArgs() []any { return append([]any(nil), l.implied...) }

func (l *slogAdapter) With(args ...any) hclog.Logger {
	implied := append(append([]any(nil), l.implied...), args...)
	return l.derive(l.base.With(attrs(args)...), l.name, implied)
}

func (l *slogAdapter) Name() string { return l.name }

func (l *slogAdapter) Named(name string) hclog.Logger {
	if l.name != "" {
		name = l.name + "." + name
	}
	return l.ResetNamed(name)
}

// ResetNamed keeps the implied arguments and replaces the name.
func (l *slogAdapter) ResetNamed(name string) hclog.Logger {
	return l.derive(l.base, name, l.implied)
}

func (l *slogAdapter) SetLevel(level hclog.Level) { l.level.Store(int32(level)) }
func (l *slogAdapter) GetLevel() hclog.Level      { return hclog.Level(l.level.Load()) }

func (l *slogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	level := slog.LevelInfo
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = slogLevel(opts.ForceLevel)
	}
	return slog.NewLogLogger(l.logger.Handler(), level)
}

func (l *slogAdapter) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return l.StandardLogger(opts).Writer()
}
