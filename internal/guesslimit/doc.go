// Package guesslimit bounds how often a caller may guess the node's bearer
// token. One Limiter serves every route that takes the token (the session
// protocol, /metrics, the cluster's leave and remove, and the console's
// login), so a guesser gains nothing by spreading its guesses over routes.
//
// A guess is checked and counted in one step, under one lock: the
// comparison happens only after the guess has been counted against its
// address, so a burst of concurrent wrong guesses gets no more comparisons
// than the limit allows. Guesses are keyed by address prefix (an IPv4
// address, /32, or an IPv6 /64, which one host can fill with addresses),
// and all unknown prefixes together share a global ceiling, which bounds
// what a guesser spread over many addresses gets.
//
// A prefix that has presented the right token within KnownFor is known:
// the global ceiling does not refuse it, so guesses from elsewhere do not
// lock the operator out. Its own per-prefix limit still holds, and while it
// is reached the right token from that prefix is refused too: comparing a
// guess from a refused prefix would hand that prefix exactly the
// comparisons the limit denies it. (A client certificate and an existing
// console login are never counted and never refused here.)
//
// Time is read from the injected time source's monotonic clock; the
// package starts no goroutine and arms no timer. Memory is bounded by
// MaxAddresses remembered prefixes: windows that ended are forgotten first,
// and with every slot held by a live window a new prefix is refused until
// one ends.
//
// This package must not be used to authenticate: it compares one secret
// and says what the caller may be told, nothing about who the caller is.
package guesslimit
