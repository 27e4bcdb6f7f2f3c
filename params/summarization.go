package params

// Summary types (SPEC 2.4, 2.7).
const (
	SummaryGeneral      = "general"
	SummaryBulletPoints = "bullet_points"
	SummaryConcise      = "concise"
)

// SummarizationConfig is summarization_config: Type is general (default),
// bullet_points or concise.
type SummarizationConfig struct {
	Type string `json:"type"`
}

func decodeSummarizationConfig(parent *object) (SummarizationConfig, bool) {
	c := SummarizationConfig{Type: SummaryGeneral}
	o, ok := parent.object("summarization_config")
	if !ok {
		return c, false
	}
	defer o.done()
	if s, path, ok := o.str("type"); ok && oneOf(o.p, path, s, SummaryGeneral, SummaryBulletPoints, SummaryConcise) {
		c.Type = s
	}
	return c, true
}
