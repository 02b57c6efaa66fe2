package cli

import (
	"errors"
	"log/slog"

	"github.com/mcpseal/mcpseal/egress"
	"github.com/mcpseal/mcpseal/gate"
	"github.com/mcpseal/mcpseal/pin"
	"github.com/mcpseal/mcpseal/stdio"
)

// remoteFlags are run's flags for a remote (Streamable HTTP) server.
type remoteFlags struct {
	url        string
	private    bool
	credHeader string
	credFile   string
	credEnv    string
}

// upstream is the remote server as the proxy's server side: every request
// goes out through the egress rules (HTTPS, public addresses checked at
// connect time, no redirects, the credential to its exact origin only).
func (f remoteFlags) upstream(e *env, id pin.Identity, logger *slog.Logger) (stdio.Server, error) {
	var cred *egress.Credential
	var err error
	switch {
	case f.credHeader != "":
		cred, err = egress.LoadCredential(f.credHeader, f.credFile, f.credEnv, e.getenv)
	case f.credFile != "":
		cred, err = egress.LoadCredentialFile(f.credFile)
	case f.credEnv != "":
		return nil, &usageError{withHint(errors.New("--credential-env needs --credential-header"), "e.g. --credential-header Authorization --credential-env MCP_TOKEN")}
	}
	if err != nil {
		return nil, &usageError{err}
	}
	up, err := egress.NewUpstream(f.url, egress.Options{
		Private:    f.private,
		Credential: cred,
		Server:     gate.ServerRef{ID: id.ID, Label: id.Label},
		Logger:     logger,
		OnFailure: func(x egress.Failure) {
			logger.Warn("upstream failure", "reason", x.Reason, "status", x.Status)
		},
	})
	if err != nil {
		return nil, exitWith(ExitServer, withHint(err, "remote servers must be https on a public address; an exact private or loopback URL needs --private"))
	}
	return up, nil
}
