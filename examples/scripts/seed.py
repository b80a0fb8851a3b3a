"""Example fixture script: prints what it would seed. Exit 0 passes the step."""

import os
import sys

orders = sys.argv[sys.argv.index("--orders") + 1] if "--orders" in sys.argv else "1"
print(f"seeding {orders} order(s) for project {os.environ.get('ARGENT_PROJECT_ROOT', '?')}")
