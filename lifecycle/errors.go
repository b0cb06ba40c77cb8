package lifecycle

import "fmt"

func newError(code Code, domain, format string, args ...any) *Error {
	return &Error{Code: code, Domain: domain, Message: fmt.Sprintf(format, args...)}
}

func errDomainExists(name string) *Error {
	return newError(CodeDomainExists, name,
		"domain '%s' already exists; use CREATE DOMAIN IF NOT EXISTS or choose another name", name)
}

func errDomainNotFound(name string) *Error {
	return newError(CodeDomainNotFound, name,
		"domain '%s' does not exist; run LIST DOMAINS to see the catalog or CREATE DOMAIN %s first", name, name)
}

func errDomainRunning(name string) *Error {
	return newError(CodeDomainRunning, name,
		"domain '%s' is running; stop it first with STOP, then DROP it", name)
}

func errAlreadyRunning(name string) *Error {
	return newError(CodeAlreadyRunning, name,
		"domain '%s' is already running; STOP it before starting a new generation", name)
}

func errAlreadyStopped(name string) *Error {
	return newError(CodeAlreadyStopped, name,
		"domain '%s' is already stopped; START it to establish a new generation", name)
}

func errNoLiveVoter(name string) *Error {
	return newError(CodeNoLiveVoter, name,
		"no live voter is available to own the clock for domain '%s'; wait for a voting node to become available and retry", name)
}

func errInvalid(domain, format string, args ...any) *Error {
	return newError(CodeInvalidCommand, domain, format, args...)
}
