#!/usr/bin/env bash
# Builds the Deep Agents UI (langchain-ai/deep-agents-ui), serves a scripted
# deep agent with `deepagents serve`, and drives the UI through a thread in
# headless Chromium (scripts/deep-agents-ui/drive.mjs): todos, an approval,
# resume, files, the thread list, a reload. Screenshots go to OUT_DIR.
#
#   scripts/deep-agents-ui.sh [UI_DIR] [OUT_DIR]
#
# UI_DIR is a checkout of deep-agents-ui (built in place: next writes .next
# and adjusts tsconfig.json); without it the script clones the commit it was
# tested with. OUT_DIR defaults to ./deep-agents-ui-screenshots.
#
# Needs Go, Node.js 20, git, python3 and Chromium (apt-get install chromium;
# CHROMIUM=/path overrides /usr/bin/chromium). The network is needed for the
# npm registry (and GitHub when cloning); Google Fonts is not: the build's
# font is served from loopback.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here=$root/scripts/deep-agents-ui
ui=${1:-}
out=$(realpath -m "${2:-deep-agents-ui-screenshots}")
ui_commit=f6a4f34
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

if [ -z "$ui" ]; then
  echo "== cloning deep-agents-ui@$ui_commit"
  git clone -q https://github.com/langchain-ai/deep-agents-ui "$work/ui"
  git -C "$work/ui" checkout -q "$ui_commit"
  ui=$work/ui
fi
ui=$(realpath "$ui")

echo "== the driver's packages (puppeteer-core, a font for the build)"
(cd "$here" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)

echo "== installing the UI's packages (yarn, its frozen lockfile)"
(cd "$ui" && npx -y yarn@1.22.22 install --frozen-lockfile --non-interactive --silent)

echo "== building the UI"
# next/font/google fetches Inter from Google Fonts at build time; the mock
# answers the stylesheet, and the font file it names comes from loopback.
fontport=$(free_port)
mkdir -p "$work/font"
cp "$here/node_modules/@fontsource/inter/files/inter-latin-400-normal.woff2" "$work/font/inter.woff2"
(cd "$work/font" && exec python3 -m http.server "$fontport" --bind 127.0.0.1 >/dev/null 2>&1) &
pids+=($!)
cat >"$work/font-mock.cjs" <<EOF
module.exports = {
  "https://fonts.googleapis.com/css2?family=Inter:wght@100..900&display=swap":
    "@font-face { font-family: 'Inter'; font-style: normal; font-weight: 100 900; font-display: swap; src: url(http://127.0.0.1:$fontport/inter.woff2) format('woff2'); }",
};
EOF
sleep 1
(cd "$ui" && NEXT_TELEMETRY_DISABLED=1 NEXT_FONT_GOOGLE_MOCKED_RESPONSES="$work/font-mock.cjs" node_modules/.bin/next build)

echo "== starting deepagents serve (replay:inline, approvals for write_file)"
(cd "$root" && go build -o "$work/deepagents" ./cmd/deepagents)
HOME=$work XDG_DATA_HOME=$work/data "$work/deepagents" serve --model replay:inline --interrupt-on write_file \
  --db "$work/threads.db" --addr 127.0.0.1:0 2>"$work/serve.log" &
pids+=($!)
for _ in $(seq 50); do grep -q 'http://' "$work/serve.log" 2>/dev/null && break; sleep 0.1; done
api=$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1)
[ -n "$api" ] || { cat "$work/serve.log"; exit 1; }
echo "server: $api"

echo "== starting the UI"
uiport=$(free_port)
(cd "$ui" && NEXT_TELEMETRY_DISABLED=1 exec node_modules/.bin/next start -H 127.0.0.1 -p "$uiport" >"$work/ui.log" 2>&1) &
pids+=($!)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$uiport/" >/dev/null && break; sleep 0.2; done

echo "== driving the UI in headless Chromium"
(cd "$here" && node drive.mjs "http://127.0.0.1:$uiport" "$api" "$out")
echo "screenshots in $out"
