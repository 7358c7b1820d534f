"""Run every benchmark, each in its own process (each sets up Django on its own database):
`python -m bench` (or `make bench`)."""

import subprocess
import sys

for name in ("ingest", "curves"):
    subprocess.run([sys.executable, "-m", f"bench.{name}"], check=True)
