package wire

// RemoveRequest is the body of a POST to RemovePath.
type RemoveRequest struct {
	Node string `json:"node"`
}

// AdminReply is the body of a leave or remove answer.
type AdminReply struct {
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}
