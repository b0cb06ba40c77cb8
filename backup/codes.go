package backup

import "github.com/nspl-dev/nspl/wire"

// The codes backup's sentinels travel under to remote sessions.
func init() {
	wire.RegisterCode("archive_missing_mapping", ErrMissingMapping)
	wire.RegisterCode("archive_version", ErrUnsupportedVersion)
	wire.RegisterCode("archive_too_large", ErrTooLarge)
	wire.RegisterCode("archive_corrupt", ErrCorrupt)
	wire.RegisterCode("archive_invalid", ErrInvalidArchive)
	wire.RegisterCode("archive_not_archive", ErrNotArchive)
	wire.RegisterCode("archive_path", ErrPath)
}
