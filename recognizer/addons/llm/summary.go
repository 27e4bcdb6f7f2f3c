package llm

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Summary types, as spelled in SPEC.md summarization_config.type.
const (
	SummaryGeneral      = "general"
	SummaryBulletPoints = "bullet_points"
	SummaryConcise      = "concise"
)

var summaryInstructions = map[string]string{
	SummaryGeneral: "Write a summary of the transcript in one or two paragraphs of plain prose.",
	SummaryBulletPoints: "Summarise the transcript as a list of its key points, one per line, each line " +
		"starting with \"- \". No other text.",
	SummaryConcise: "Summarise the transcript in one or two sentences.",
}

const summarySystem = "You summarise transcripts of recordings made by speech recognition (they may lack " +
	"punctuation and contain recognition errors). Use only what the transcript says. Write in the " +
	"language of the transcript. Reply with the summary only."

var bulletPrefix = regexp.MustCompile(`^\s*(?:[-*•‣–]|\d+[.)])\s*`)

// AbstractiveSummary has the model summarise transcript as typ
// ("general", "bullet_points" or "concise"; anything else counts as
// general), within Config.Budget. A transcript over MaxInputChars is cut
// into parts at word boundaries, each summarised, and the summaries are
// summarised. Bullet points come back as lines starting "- " whatever
// list marks the model used.
func AbstractiveSummary(ctx context.Context, c *Client, transcript, typ string) (string, error) {
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	if _, ok := summaryInstructions[typ]; !ok {
		typ = SummaryGeneral
	}
	text := strings.Join(strings.Fields(transcript), " ")
	for round := 0; len(text) > c.cfg.MaxInputChars; round++ {
		var parts []string
		for _, chunk := range chunks(text, c.cfg.MaxInputChars) {
			s, err := c.Complete(ctx, summarySystem, summaryInstructions[SummaryGeneral]+"\n\nTranscript (part):\n"+chunk)
			if err != nil {
				return "", fmt.Errorf("llm: summarise part (round %d): %w", round+1, err)
			}
			parts = append(parts, strings.Join(strings.Fields(s), " "))
		}
		next := strings.Join(parts, " ")
		if len(next) >= len(text) {
			return "", fmt.Errorf("llm: summarise: %w: partial summaries do not shrink (%d chars)", ErrMalformed, len(next))
		}
		text = next
	}
	s, err := c.Complete(ctx, summarySystem, summaryInstructions[typ]+"\n\nTranscript:\n"+text)
	if err != nil {
		return "", fmt.Errorf("llm: summarise: %w", err)
	}
	if typ == SummaryBulletPoints {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(bulletPrefix.ReplaceAllString(l, "")); l != "" {
				lines = append(lines, "- "+l)
			}
		}
		s = strings.Join(lines, "\n")
	}
	return s, nil
}

// chunks cuts text into pieces of at most n bytes at spaces (a single
// longer word is cut inside).
func chunks(text string, n int) []string {
	var out []string
	for len(text) > n {
		cut := strings.LastIndexByte(text[:n], ' ')
		if cut <= 0 {
			cut = n
		}
		out = append(out, strings.TrimSpace(text[:cut]))
		text = strings.TrimSpace(text[cut:])
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}
