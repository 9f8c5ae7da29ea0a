#!/bin/bash
ok=1
cmp -s config.ini /tests/config.ini || ok=0
[ "$(python3 server.py 2>/dev/null)" = "listening on 8080" ] || ok=0
sed 's/8080/9090/' /tests/config.ini > config.ini
[ "$(python3 server.py 2>/dev/null)" = "listening on 9090" ] || ok=0
echo $ok > /logs/verifier/reward.txt
