package lifecycle

import "context"

// requestIDKey is the context key of WithRequestID.
type requestIDKey struct{}

// WithRequestID returns ctx carrying id as the request id of the catalog
// write made under it, so a writer that retries one write from outside the
// node (a remote client that reconnects and sends the statement again)
// names every attempt the same and the catalog applies it once: the node's
// commit path gives the command id instead of a fresh one, and answers an
// id the catalog already applied with its first result. An empty id leaves
// ctx as it is.
func WithRequestID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id WithRequestID put in ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
