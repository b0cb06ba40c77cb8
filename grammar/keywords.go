package grammar

import "strings"

// keywords lists every keyword of the language in its canonical upper-case
// spelling. Keywords are reserved: a domain whose name is spelled like one
// is written in backticks (`clock`), and the canonical printer does that.
// A new statement adds its words here and its rule in parser.go.
var keywords = []string{
	"ALTER", "AS", "AT", "ATTACH",
	"BACKUP", "BEGIN",
	"CLOCK", "CLUSTER", "COLOCATION", "COMMIT", "CORDON", "CREATE",
	"DESCRIBE", "DETACH", "DOMAIN", "DOMAINS", "DRAIN", "DROP", "DRY",
	"EXISTS",
	"FROM",
	"IF",
	"LIKE", "LIST",
	"NEUTRAL", "NODE", "NOT", "NOW",
	"PACED", "PERIOD", "PLACEMENT", "PREFER",
	"RATE", "REQUIRE", "RESTORE", "RESUME", "REVERT", "ROLLBACK", "RUN",
	"SEPARATION", "SET", "SHOW", "SKEW", "START", "STATUS", "STOP", "SUGGEST",
	"TIME", "TO", "TRANSACTIONS",
	"UNCORDON", "UNPACED", "USE",
	"WITH",
}

// keywordsByLen buckets keywords by length so that recognising a word costs
// a handful of case-insensitive comparisons and no allocation.
var keywordsByLen = func() [][]string {
	longest := 0
	for _, k := range keywords {
		longest = max(longest, len(k))
	}
	out := make([][]string, longest+1)
	for _, k := range keywords {
		out[len(k)] = append(out[len(k)], k)
	}
	return out
}()

// lookupKeyword returns the canonical spelling of word if it is a keyword
// in any letter case.
func lookupKeyword(word string) (string, bool) {
	if len(word) >= len(keywordsByLen) {
		return "", false
	}
	for _, k := range keywordsByLen[len(word)] {
		if strings.EqualFold(word, k) {
			return k, true
		}
	}
	return "", false
}

// IsKeyword reports whether word, in any letter case, is a reserved keyword.
func IsKeyword(word string) bool {
	_, ok := lookupKeyword(word)
	return ok
}

// Keywords returns every reserved keyword, upper-case and sorted.
func Keywords() []string {
	return append([]string(nil), keywords...)
}
