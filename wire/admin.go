package wire

// RemoveRequest is the body of a POST to RemovePath.
type RemoveRequest struct {
	Node string `json:"node"`
	// Force removes a node that is still live (nspl remove --force);
	// without it a live node is refused: it should leave instead.
	Force bool `json:"force,omitempty"`
}

// AdminReply is the body of a leave or remove answer.
type AdminReply struct {
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}
