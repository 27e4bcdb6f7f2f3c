package pipeline

import (
	"slices"
	"testing"
)

// envelopeOf checks that v is an add-on envelope with exactly its five
// fields and returns it.
func envelopeOf(t *testing.T, name string, v any) map[string]any {
	t.Helper()
	env, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: %T is not an envelope", name, v)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"error", "exec_time", "is_empty", "results", "success"}; !slices.Equal(keys, want) {
		t.Errorf("%s: envelope keys %v, want %v", name, keys, want)
	}
	if _, ok := env["success"].(bool); !ok {
		t.Errorf("%s: success %v", name, env["success"])
	}
	if et, ok := env["exec_time"].(float64); !ok || et < 0 {
		t.Errorf("%s: exec_time %v", name, env["exec_time"])
	}
	if env["success"] == true && env["error"] != nil {
		t.Errorf("%s: success with error %v", name, env["error"])
	}
	if e, ok := env["error"].(map[string]any); ok {
		if _, ok := e["status_code"].(float64); !ok || e["exception"] == "" || e["message"] == "" {
			t.Errorf("%s: AddonError %v", name, e)
		}
	} else if env["error"] != nil {
		t.Errorf("%s: error %v", name, env["error"])
	}
	return env
}

func errorStatus(env map[string]any) (int, string, string) {
	e, _ := env["error"].(map[string]any)
	if e == nil {
		return 0, "", ""
	}
	code, _ := e["status_code"].(float64)
	exc, _ := e["exception"].(string)
	msg, _ := e["message"].(string)
	return int(code), exc, msg
}
