package pki

import "errors"

// Sentinel errors of the package. Every error returned wraps one of them.
var (
	// ErrInvalidName: a node or client name that cannot be a certificate
	// identity (it must be a DNS label: 1–63 ASCII letters, digits or '-',
	// not starting or ending with '-').
	ErrInvalidName = errors.New("invalid certificate name")
	// ErrInvalidHost: a host that is neither an IP address nor a DNS name.
	ErrInvalidHost = errors.New("invalid certificate host")
	// ErrExists: a file the caller asked to create already exists; pki never
	// overwrites key material.
	ErrExists = errors.New("certificate file already exists; remove it or choose another directory")
	// ErrMaterial: a certificate or key file is missing, unreadable or not
	// the PEM this package writes.
	ErrMaterial = errors.New("invalid certificate material")
	// ErrNoIdentity: a peer presented no verified certificate carrying an
	// nspl identity of the required kind.
	ErrNoIdentity = errors.New("peer certificate carries no nspl identity")
)
