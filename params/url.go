package params

import (
	"net/url"
	"strings"
)

// filesPrefix is the path of service-hosted files (PROTOCOL.md: any audio_url
// whose path is /v2/files/{file_id} is read from local storage, whatever its
// host).
const filesPrefix = "/v2/files/"

// FileID returns the id of the service-hosted file that audioURL names, and
// whether it names one: an http(s) URL whose path is exactly
// /v2/files/{file_id}, whatever its host.
func FileID(audioURL string) (id string, ok bool) {
	u, err := url.Parse(audioURL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return "", false
	}
	id, ok = strings.CutPrefix(u.Path, filesPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	return id, true
}

// parseAbsURL parses s as an absolute URL with a host. It does not check the
// scheme: a callback URL must be http(s) (400), an audio_url with another
// scheme is a 422 (PROTOCOL.md).
func parseAbsURL(p *problems, path, s string) (*url.URL, bool) {
	if len(s) > MaxURLLength {
		p.addf(path, "must be at most %d bytes", MaxURLLength)
		return nil, false
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() == "" {
		p.addf(path, "must be an absolute URL")
		return nil, false
	}
	return u, true
}

// httpURL checks a URL the appliance will send to (callbacks): absolute,
// http or https, with a host.
func httpURL(p *problems, path, s string) bool {
	u, ok := parseAbsURL(p, path, s)
	if !ok {
		return false
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		p.addf(path, "must be an http or https URL")
		return false
	}
	return true
}
