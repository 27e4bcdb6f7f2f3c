package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// PromptAnswer is one audio_to_llm result. Err is set, and Response
// empty, when that prompt failed; the other prompts still get answers.
type PromptAnswer struct {
	Prompt   string `json:"prompt"`
	Response string `json:"response"`
	Err      error  `json:"-"`
}

const promptSystem = "You answer requests about the transcript of a recording made by speech recognition " +
	"(it may lack punctuation and contain recognition errors). Base your answer only on the transcript; " +
	"if it does not contain what is asked, say so. Answer in the language of the request."

// AnswerPrompts asks each prompt about transcript, one request per prompt,
// all within Config.Budget, and returns one answer per prompt in order. The
// error joins the failures of individual prompts (each also in its
// answer's Err). A transcript over MaxInputChars fails every prompt with
// ErrTooLarge.
func AnswerPrompts(ctx context.Context, c *Client, transcript string, prompts []string) ([]PromptAnswer, error) {
	ctx, cancel := c.WithBudget(ctx)
	defer cancel()
	out := make([]PromptAnswer, len(prompts))
	var errs []error
	for i, p := range prompts {
		out[i].Prompt = p
		var err error
		if n := len(transcript); n > c.cfg.MaxInputChars {
			err = fmt.Errorf("%w: transcript %d chars > limit %d", ErrTooLarge, n, c.cfg.MaxInputChars)
		} else {
			user := "Transcript:\n\"\"\"\n" + strings.TrimSpace(transcript) + "\n\"\"\"\n\nRequest: " + p
			out[i].Response, err = c.Complete(ctx, promptSystem, user)
		}
		if err != nil {
			out[i].Err = fmt.Errorf("llm: prompt %d: %w", i+1, err)
			errs = append(errs, out[i].Err)
		}
	}
	return out, errors.Join(errs...)
}
