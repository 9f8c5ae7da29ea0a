package langgraph

// Values of the requests' other enumerations.
const (
	// IfExistsDoNothing (ThreadCreate.IfExists, AssistantCreate.IfExists)
	// answers the existing thread or assistant instead of a conflict.
	IfExistsDoNothing = "do_nothing"
	// IfNotExistsCreate (RunCreate.IfNotExists) creates a missing thread.
	IfNotExistsCreate = "create"
	// OnDisconnectContinue and OnDisconnectCancel (RunCreate.OnDisconnect)
	// say whether a run outlives the client that streams or waits for it.
	OnDisconnectContinue = "continue"
	OnDisconnectCancel   = "cancel"
	// OnCompletionKeep (RunCreate.OnCompletion) keeps the thread of a run
	// without one (POST /runs/stream, /runs/wait).
	OnCompletionKeep = "keep"
	// CancelInterrupt and CancelRollback are the actions of a cancel.
	CancelInterrupt = "interrupt"
	CancelRollback  = "rollback"
)

// Keys of a run's final values (what wait and join answer) and of values
// events.
const (
	// ErrorKey holds a failed run's Failure.
	ErrorKey = "__error__"
	// InterruptKey holds the interrupts a run stopped at.
	InterruptKey = "__interrupt__"
)

// Headers of the API.
const (
	// HeaderAPIKey carries the server's key.
	HeaderAPIKey = "X-Api-Key"
	// HeaderLastEventID says where a rejoined stream resumes.
	HeaderLastEventID = "Last-Event-ID"
	// HeaderPaginationTotal is the number of a search's results.
	HeaderPaginationTotal = "X-Pagination-Total"
)
