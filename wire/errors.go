package wire

// Sentinel errors of the session protocol. They are wire's own because both
// ends, server and client, refuse with them.
var (
	// ErrClosed: the engine, node, session or client a call used was
	// closed by its owner, so nothing more runs on it. It is the one closed
	// error of the module: nspl.ErrClosed, node.ErrClosed,
	// session.ErrClosed and client.ErrClosed are this value, and it crosses
	// the wire as session_closed, so a closed path matches every one of
	// those names with errors.Is, locally and remotely. Nothing that
	// returns it positions it in statement text: being closed is no
	// statement's fault.
	ErrClosed = NewSentinel("session_closed", "use of a closed engine, node, session or client; open a new one")
	// ErrMessageTooLarge: a line longer than its limit.
	ErrMessageTooLarge = NewSentinel("message_too_large", "protocol message exceeds its size limit")
	// ErrProtocol: a message that does not decode or breaks the protocol.
	ErrProtocol = NewSentinel("protocol", "malformed session protocol message")
	// ErrRequestOrder: a request id that does not exceed the one before.
	ErrRequestOrder = NewSentinel("request_order", "request ids must increase")
	// ErrSessionIdle: the client sent nothing for the session idle timeout.
	ErrSessionIdle = NewSentinel("session_idle", "session closed after sending nothing for too long; keep it alive with ping messages")
	// ErrMessageTimeout: a started client message did not end in time.
	ErrMessageTimeout = NewSentinel("message_timeout", "a client message did not arrive whole within the message timeout; send each message at once")
	// ErrArchiveRequired: a BACKUP, RESTORE or DESCRIBE BACKUP arrived
	// without its archive. Over the session protocol the archive file is
	// the client's, and the server never opens a path a client names.
	ErrArchiveRequired = NewSentinel("archive_required", "over a remote session the archive file is on the client, and this request did not carry it; use an nspl client of this version, which reads and writes the file itself")
	// ErrArchiveBusy: the server holds as many uploaded archives as it
	// allows at once.
	ErrArchiveBusy = NewSentinel("archive_busy", "this node is receiving as many archives as it allows at once; try again shortly")
	// ErrArchiveTimeout: an uploaded archive whose statement did not follow
	// it within the server's upload timeout; its slot was freed.
	ErrArchiveTimeout = NewSentinel("archive_timeout", "the uploaded archive was dropped")
	// ErrCanceled stands for context.Canceled and DeadlineExceeded on the
	// wire.
	ErrCanceled = NewSentinel("canceled", "request cancelled")
	// ErrClockInterrupted: the serving node cannot vouch for the clock: it
	// lost contact with the consensus leader for longer than its authority
	// lease, or is catching up after regaining it. It travels in an
	// interrupted frame (FrameInterrupted).
	ErrClockInterrupted = NewSentinel("clock_interrupted", "the serving node lost contact with the cluster's leader and cannot vouch for this clock; ticks resume once it is back and caught up, or attach through another node")
)

// Sentinels returns the session protocol's coded sentinels, for the
// module's one code table.
func Sentinels() []error {
	return []error{ErrClosed, ErrCanceled, ErrProtocol, ErrMessageTooLarge, ErrRequestOrder, ErrSessionIdle,
		ErrMessageTimeout, ErrArchiveRequired, ErrArchiveBusy, ErrArchiveTimeout, ErrClockInterrupted}
}
