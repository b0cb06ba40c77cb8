package session

import "github.com/nspl-dev/nspl/wire"

// tickFrameBase returns the size of the JSON encoding of a tick frame of the
// attachment without its five numbers: the encoding (wire.Frame.AppendJSON)
// of a tick frame whose numbers are all zero, less their five digits.
func tickFrameBase(domain string, id uint64) int {
	return len(wire.Frame{Domain: domain, Attachment: id, Kind: wire.FrameTick}.AppendJSON(nil)) - 5
}

// frameSize returns the size of f's JSON encoding. A tick frame of the
// attachment, the frame built on every tick, is measured without encoding
// it: its encoding is the attachment's fixed part and the decimal digits of
// its numbers. Other frames, built only when the clock changes, are encoded
// into a scratch buffer.
func (a *attachment) frameSize(f wire.Frame) int {
	if f.Kind == wire.FrameTick && f.Domain == a.domain && f.Attachment == a.id {
		return int(a.tickBase) + tickDigits(f.Tick, f.Reading)
	}
	var scratch [256]byte
	return len(f.AppendJSON(scratch[:0]))
}

// tickDigits returns the decimal length of a tick frame's five numbers, its
// tick's and its reading's: what its size adds to the attachment's fixed
// part, the same for every attachment that receives it.
func tickDigits(t wire.Tick, reading int64) int {
	return uintDigits(t.Generation) + uintDigits(t.ID) + intDigits(t.Boundary) + intDigits(t.AuthorityUTC) + intDigits(reading)
}

// uintDigits returns the number of decimal digits of u.
func uintDigits(u uint64) int {
	n := 1
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}

// intDigits returns the length of i in decimal, its sign included.
func intDigits(i int64) int {
	if i < 0 {
		// -i wraps for the least int64, whose magnitude uint64 still holds.
		return 1 + uintDigits(uint64(-i))
	}
	return uintDigits(uint64(i))
}
