package console

import (
	"errors"
	"net/http"
)

// errCrossSite refuses an API request a page of another site made.
var errCrossSite = errors.New("the console's event streams and API answer only its own pages: this request came from another site (Sec-Fetch-Site or Origin); open the console itself and try there")

// sameOriginOnly refuses, with 403, an API request (the event streams and
// whoami) that a page of another site sent, whoever the caller is: a
// stream opened cross-site would spend the caller's session share and
// attach clocks in its name, a client certificate's caller included, as
// the browser presents the certificate to any site's request. A request
// from no browser page (no Sec-Fetch-Site, no Origin) passes, as in
// sameOrigin.
func sameOriginOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			http.Error(w, errCrossSite.Error(), http.StatusForbidden)
			return
		}
		h(w, r)
	}
}
