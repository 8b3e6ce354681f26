#!/bin/sh
# Installs what `npm start`, `npm run start:cluster`, `npm test` and `npm run bench` need on a fresh machine, and nothing
# when it is there: the npm packages (from package-lock.json), Debian's chromium (PDF rendering and browser tests),
# redis-server (the shared limiter store: `npm start` and `start:cluster` run a private one, and so do the tests),
# haproxy (the proxy in front of the replicas of `npm run start:cluster`), Ceph's radosgw with a monitor and an OSD
# (the S3 document archive with Object Lock of `npm run start:cluster` and the archive's tests), and the e-invoice
# validator's xmllint, Java and Saxon-HE (vendor/einvoice/validate.sh: the tests check every e-invoice against the
# official rules).
set -e
cd "$(dirname "$0")/.."
if [ ! -x node_modules/.bin/node ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing npm packages…" >&2
  npm ci --loglevel=warn >&2
fi
# Debian packages: chromium renders PDFs (and runs the browser tests); poppler-utils' pdftotext lets the tests read them.
missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v pdftotext >/dev/null 2>&1 || missing="$missing poppler-utils"
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
# Debian puts haproxy in /usr/sbin, which is not on every user's PATH.
{ command -v haproxy || [ -x /usr/sbin/haproxy ]; } >/dev/null 2>&1 || missing="$missing haproxy"
# Ceph's S3 gateway with one monitor and one OSD: the document archive (Object Lock) of start:cluster and its tests.
command -v radosgw >/dev/null 2>&1 || missing="$missing radosgw"
command -v ceph-mon >/dev/null 2>&1 || missing="$missing ceph-mon"
command -v ceph-osd >/dev/null 2>&1 || missing="$missing ceph-osd"
command -v ceph >/dev/null 2>&1 || missing="$missing ceph-common"
# The e-invoice validator: xmllint checks the UBL 2.1 schema, Saxon-HE on a Java runtime runs the schematron rules.
command -v xmllint >/dev/null 2>&1 || missing="$missing libxml2-utils"
command -v java >/dev/null 2>&1 || missing="$missing default-jre-headless"
[ -r /usr/share/java/Saxon-HE.jar ] || missing="$missing libsaxonhe-java"
if [ -n "$missing" ] && [ -z "${SKIP_DEBIAN_INSTALL:-}" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian packages:$missing…" >&2
    # shellcheck disable=SC2086
    (apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends $missing >/dev/null; }) >&2
  else
    echo "Missing Debian packages:$missing (PDF rendering needs chromium; the tests read PDFs with pdftotext; rate and look-up limits live in redis-server; start:cluster needs haproxy, and radosgw, ceph-mon, ceph-osd and ceph-common for its document archive; the e-invoice tests need xmllint, java and Saxon-HE)." >&2
  fi
fi
