// Package deploy holds the files a production host is deployed with: the
// systemd unit gortapi-halhost.service, which docs/DEPLOY.md explains.
// Its test checks the unit with systemd-analyze verify (where systemd is
// installed) and against the docs.
package deploy
