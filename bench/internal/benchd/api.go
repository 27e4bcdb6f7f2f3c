package benchd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Call does one API request on the daemon and checks its status: key is
// the x-service-key header ("" sends none), a non-empty body goes as JSON,
// and out, when not nil, takes the JSON body of the answer.
func (d *Daemon) Call(method, path, key, body string, want int, out any) error {
	req, err := http.NewRequest(method, d.Base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	if key != "" {
		req.Header.Set("x-service-key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
