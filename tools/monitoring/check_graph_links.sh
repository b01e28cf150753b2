#!/bin/sh
# Opens every Prometheus graph link (http://.../graph?g0.expr=...) in the
# output of the demo (`make run`, running: its Prometheus must still be up)
# in headless Chromium (Debian package chromium) and prints, per link, the
# "Total time series" Prometheus' page shows for each graph. Exits 1 when a
# graph shows no series or its query failed. Usage:
#   tools/monitoring/check_graph_links.sh DEMO_OUTPUT [SCREENSHOT.png]
# With SCREENSHOT, the first link with series is also saved as a PNG.
set -eu
out=$1
shot=${2:-}
chrome="chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1300,1150 --virtual-time-budget=8000"
status=0
for url in $(grep -o 'http://[^ ]*/graph?[^ ]*' "$out"); do
  dom=$($chrome --dump-dom "$url" 2>/dev/null)
  series=$(printf '%s' "$dom" | grep -o 'Total time series: [0-9]*' | grep -o '[0-9]*$' | tr '\n' ' ')
  # Why not the error box: Debian's classic UI keeps a hidden one in every
  # page; a query that fails shows no "Total time series" at all.
  if [ -z "$series" ] || printf ' %s' "$series" | grep -q ' 0 '; then
    echo "NO DATA  $url ($series)"; status=1
  else
    echo "series: $series $url"
    if [ -n "$shot" ]; then $chrome --screenshot="$shot" "$url" >/dev/null 2>&1; shot=; fi
  fi
done
exit $status
