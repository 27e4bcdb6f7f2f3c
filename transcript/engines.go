package transcript

// EngineInfo describes one installed engine (GET /v2/engines).
type EngineInfo struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"` // "embedded" or "remote"
	Model     string   `json:"model,omitempty"`
	Languages []string `json:"languages"`
	Detects   bool     `json:"language_detection"`
	// Capacity and Busy are the engine's decoders (the embedded engine's
	// pool for whole recordings of wideband audio) or request slots.
	Capacity int `json:"capacity"`
	Busy     int `json:"busy"`
	// Pools are the embedded engine's decoder pools, each with its
	// acoustic model and decoders loaded and busy (nil for a remote
	// engine).
	Pools []PoolInfo `json:"pools,omitempty"`
	// Routes lists what is routed to this engine: "model-1", "model-3",
	// "language:fr" ... (explicit routes and the defaults).
	Routes []string `json:"routes"`
}

// PoolInfo is one loaded decoder pool of the embedded engine (GET
// /v2/engines).
type PoolInfo struct {
	Name          string `json:"name"`
	AcousticModel string `json:"acoustic_model,omitempty"`
	// Decoders are the pool's loaded decoders, Busy those decoding.
	Decoders int `json:"decoders"`
	Busy     int `json:"busy"`
}
