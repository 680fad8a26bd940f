// One HTTPS GET the way a Go program makes it, for pinproxy's CONNECT tests.
//
//	go-https-client -output FILE URL
//
// Nothing is configured in code: net/http's default transport takes the proxy
// from HTTPS_PROXY (http.ProxyFromEnvironment) and crypto/x509 takes the
// trusted roots from SSL_CERT_FILE, as for any Go program on Linux. The body
// is streamed to FILE; stdout gets one JSON line {"status": <int or null>,
// "error": <text or null>}; the exit status is 0 when a response arrived and
// 1 when the request failed. Standard library only.
package main

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"time"
)

type outcome struct {
	Status *int    `json:"status"`
	Error  *string `json:"error"`
}

func report(result outcome, code int) {
	line, _ := json.Marshal(result)
	os.Stdout.Write(append(line, '\n'))
	os.Exit(code)
}

func fail(err error) {
	text := err.Error()
	report(outcome{Error: &text}, 1)
}

func main() {
	output := flag.String("output", "", "where the body goes")
	flag.Parse()
	if *output == "" || flag.NArg() != 1 {
		fail(flagError("usage: go-https-client -output FILE URL"))
	}
	client := &http.Client{Timeout: 60 * time.Second}
	response, err := client.Get(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	defer response.Body.Close()
	sink, err := os.Create(*output)
	if err != nil {
		fail(err)
	}
	if _, err := io.Copy(sink, response.Body); err != nil {
		fail(err)
	}
	if err := sink.Close(); err != nil {
		fail(err)
	}
	status := response.StatusCode
	report(outcome{Status: &status}, 0)
}

type flagError string

func (e flagError) Error() string { return string(e) }
