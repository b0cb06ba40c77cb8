// Package session runs statements for one client: the active domain, an open
// transaction, an ordered lane of requests and the clock attachments. The
// shell, the script runner, the embedded API and the network server are all
// consumers of a session.
package session
