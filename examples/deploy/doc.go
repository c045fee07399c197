// Package deploy holds the files a production host is deployed with: the
// systemd unit gortapi-halhost.service, which docs/DEPLOY.md explains.
// Its test checks the unit with systemd-analyze verify and security
// (where systemd is installed) and against the docs: no capability, the
// limits, the sandbox, and a group of the host's own for its shared
// memory, apart from the real-time limits group.
package deploy
