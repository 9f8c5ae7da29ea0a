"""check.py OLD NEW: exit 0 when NEW (JSON) is OLD migrated."""
import json
import sys

WANT = {
    "config.json": {
        "version": 2, "name": "shop", "debug": True,
        "servers": [
            {"name": "cache", "address": "10.0.0.3:6379", "replicas": 1},
            {"name": "db", "address": "10.0.0.2:5432", "replicas": 2},
            {"name": "web", "address": "10.0.0.1:80", "replicas": 1},
        ],
    },
    "other.json": {
        "version": 2, "name": "blog", "debug": False,
        "servers": [
            {"name": "alpha", "address": "a.internal:8080", "replicas": 1},
            {"name": "zeta", "address": "z.internal:8443", "replicas": 3},
        ],
    },
}

with open(sys.argv[2]) as f:
    got = json.load(f)
sys.exit(0 if got == WANT[sys.argv[1].rsplit("/", 1)[-1]] else 1)
