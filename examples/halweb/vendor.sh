#!/bin/sh
# vendor.sh fetches uPlot's dist files into static/vendor/ with npm pack
# (no CDN: the page is embedded with go:embed and works offline) and
# checks the tarball against the sha512 integrity the registry publishes.
# Run it from anywhere; commit what it writes. VERSION pins the release.
set -eu
VERSION=${VERSION:-1.6.32}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/static/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
want=$(npm view "uplot@$VERSION" dist.integrity)
case $want in
sha512-*) ;;
*) echo "vendor.sh: no sha512 integrity for uplot@$VERSION: $want" >&2; exit 1 ;;
esac
npm pack --silent "uplot@$VERSION" >/dev/null
tgz=uplot-$VERSION.tgz
got=sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)
if [ "$got" != "$want" ]; then
	echo "vendor.sh: $tgz: integrity $got, the registry says $want" >&2
	exit 1
fi
tar -xzf "$tgz"
mkdir -p "$out"
cp package/dist/uPlot.iife.min.js package/dist/uPlot.min.css package/LICENSE "$out/"
echo "uplot@$VERSION $want" >"$out/VERSION"
echo "vendor.sh: uplot@$VERSION into $out ($want)"
