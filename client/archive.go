package client

import (
	"fmt"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// prepareArchive readies the archive of a BACKUP, RESTORE or DESCRIBE
// BACKUP, whose file is on this machine: the node never opens a path a
// client names. A BACKUP's destination is resolved and, unless
// Config.OverwriteArchives, checked before anything is asked of the node
// (backup.CheckReplace); a RESTORE's or DESCRIBE BACKUP's file is read
// here (backup.ReadFile: a regular file of at most backup.MaxArchiveBytes)
// and uploaded, for the node to verify.
func (c *Client) prepareArchive(p planner.Plan) (*wire.Archive, []byte, error) {
	var path string
	switch p := p.(type) {
	case planner.Backup:
		dest, err := backup.ExpandPath(p.Path)
		if err != nil {
			return nil, nil, err
		}
		if !c.cfg.OverwriteArchives {
			if err := backup.CheckReplace(dest); err != nil {
				return nil, nil, err
			}
		}
		return &wire.Archive{Name: dest}, nil, nil
	case planner.Restore:
		path = p.Path
	case planner.DescribeBackup:
		path = p.Path
	}
	name, b, err := backup.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return &wire.Archive{Name: name, Bytes: int64(len(b))}, b, nil
}

// saveArchive writes the archive a BACKUP's reply brought to dest, after
// verifying it whole: crash-safely, 0600, and without replacing a file
// that is not an archive unless Config.OverwriteArchives
// (backup.WriteFile).
func (c *Client) saveArchive(dest string, reply wire.ServerMessage) error {
	if reply.Archive == nil || reply.Archive.Bytes != int64(len(reply.Data)) {
		return fmt.Errorf("%w: the BACKUP reply does not describe the %d archive bytes sent with it", wire.ErrProtocol, len(reply.Data))
	}
	if _, err := backup.DecodeNamed(dest, reply.Data); err != nil {
		return fmt.Errorf("the archive the node sent did not verify, so nothing was written: %w", err)
	}
	if _, err := backup.WriteFile(dest, reply.Data, backup.WriteOptions{Overwrite: c.cfg.OverwriteArchives}); err != nil {
		return fmt.Errorf("the node captured the backup, but writing it here failed: %w", err)
	}
	return nil
}
