package catalog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
)

// Raft's routine election lines are demoted to debug; its other warnings,
// and records of other loggers with the same message, keep their level.
func TestRoutineRaftAtDebug(t *testing.T) {
	tests := []struct {
		name    string
		logger  string // "" logs through the catalog's own logger
		level   hclog.Level
		msg     string
		handler slog.Level
		want    string // the logged level, "" for nothing
	}{
		{"election warning hidden at warn", "raft", hclog.Warn, "heartbeat timeout reached, starting election", slog.LevelWarn, ""},
		{"election warning at debug", "raft", hclog.Warn, "heartbeat timeout reached, starting election", slog.LevelDebug, "DEBUG"},
		{"a repeated election hidden at warn", "raft", hclog.Warn, "Election timeout reached, restarting election", slog.LevelWarn, ""},
		{"leader state at debug", "raft", hclog.Info, "entering leader state", slog.LevelDebug, "DEBUG"},
		{"leader state hidden at info", "raft", hclog.Info, "entering leader state", slog.LevelInfo, ""},
		{"transport logger too", "raft-net", hclog.Info, "election won", slog.LevelDebug, "DEBUG"},
		{"other raft warning kept", "raft", hclog.Warn, "failed to contact", slog.LevelWarn, "WARN"},
		{"routine message as an error kept", "raft", hclog.Error, "entering leader state", slog.LevelWarn, "ERROR"},
		{"other logger kept", "", hclog.Warn, "heartbeat timeout reached, starting election", slog.LevelWarn, "WARN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(RoutineRaftAtDebug(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: tt.handler})))
			logger = logger.With("node_name", "local")
			if tt.logger != "" {
				newRaftLogger(logger, tt.logger, hclog.Trace, nil).Log(tt.level, tt.msg, "term", 2)
			} else {
				logger.Log(t.Context(), slogLevel(tt.level), tt.msg)
			}
			out := strings.TrimSpace(buf.String())
			if tt.want == "" {
				require.Empty(t, out)
				return
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &m))
			require.Equal(t, tt.want, m["level"])
			require.Equal(t, tt.msg, m["msg"])
			require.Equal(t, "local", m["node_name"])
		})
	}
}
