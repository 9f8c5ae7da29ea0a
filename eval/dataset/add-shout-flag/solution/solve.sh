#!/bin/bash
cat > greet.sh <<'SH'
#!/bin/sh
# greet.sh [--shout] NAME: says hello, in capitals with --shout.
if [ "$1" = "--shout" ]; then
  shift
  echo "hello $1" | tr '[:lower:]' '[:upper:]'
else
  echo "hello $1"
fi
SH
