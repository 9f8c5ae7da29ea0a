#!/bin/bash
cat > migrate.sh <<'SH'
#!/bin/sh
# migrate.sh < OLD > NEW: a configuration in the new format (version 2).
exec jq '{version: 2, name, debug: (.debug == "yes"),
  servers: (.servers | to_entries | sort_by(.key)
    | map({name: .key, address: "\(.value.host):\(.value.port)", replicas: (.value.replicas // 1)}))}'
SH
